package containerd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// A hostPath mounted with mountPropagation HostToContainer reaches containerd as CRI's
// PROPAGATION_HOST_TO_CONTAINER (upstream translateMountPropagation), which containerd honours
// only where the host path sits on a shared or slave mount: there the container's mount is a
// slave of the node's ("master:" in its mountinfo); on a private one (as / in many containers and
// VMs) containerd refuses the container, CreateContainerError with its own words. Either way a
// kubelet that dropped the field (a private mount) fails this spec.
func testMountPropagation(t *testing.T, n *node) {
	ns := namespace(t)
	dir := t.TempDir()
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: dir, Type: ptr.To(corev1.HostPathDirectory)}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host",
		MountPropagation: ptr.To(corev1.MountPropagationHostToContainer)}}
	mountpoint, optional := hostMount(t, dir)
	if !strings.Contains(optional, "shared:") && !strings.Contains(optional, "master:") {
		createPod(t, ns, "slave", spec)
		want := "is mounted on \"" + mountpoint + "\" but it is not a shared or slave mount"
		framework.Eventually(t, time.Minute, "CreateContainerError: "+want, func() (bool, string) {
			p := getPod(t, ns, "slave")
			for _, s := range p.Status.ContainerStatuses {
				if w := s.State.Waiting; w != nil && w.Reason == "CreateContainerError" && strings.Contains(w.Message, want) {
					t.Logf("%s is on the private mount %s: %s", dir, mountpoint, w.Message)
					return true, ""
				}
			}
			return false, describe(p)
		})
		return
	}
	runningPod(t, ns, "slave", spec)
	out, code := kubectl(t, "-n", ns, "exec", "slave", "--", "cat", "/proc/self/mountinfo")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[4] == "/host" {
			if !strings.Contains(line, " master:") {
				t.Errorf("the container's /host is not a slave mount: %s", line)
			}
			return
		}
	}
	t.Errorf("no /host in the container's mountinfo (exit %d):\n%s", code, out)
}

// hostMount returns the mount point under which path lies, in this process's mount namespace
// (containerd's), and its optional fields ("shared:N", "master:N" or none: private).
func hostMount(t *testing.T, path string) (mountpoint, optional string) {
	t.Helper()
	path, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		// id parent major:minor root mountpoint options [optional…] - fstype source superoptions
		before, _, ok := strings.Cut(line, " - ")
		f := strings.Fields(before)
		if !ok || len(f) < 6 {
			continue
		}
		mp := f[4]
		if (path == mp || mp == "/" || strings.HasPrefix(path, mp+"/")) && len(mp) >= len(mountpoint) {
			mountpoint, optional = mp, strings.Join(f[6:], " ")
		}
	}
	return mountpoint, optional
}

package containerd

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// withEmptyDir gives the pod's container an emptyDir at /<name>.
func withEmptyDir(spec corev1.PodSpec, name string, medium corev1.StorageMedium, sizeLimit string) corev1.PodSpec {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium, SizeLimit: ptr.To(resource.MustParse(sizeLimit))}}})
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: name, MountPath: "/" + name})
	return spec
}

// emptyDir on containerd (upstream pkg/volume/emptydir): medium Memory is a tmpfs of the
// sizeLimit's size (size=32768k for 32Mi) in the container's /proc/mounts, mounted by minikubelet
// in the mount namespace it shares with containerd (the test's own: framework.InPrivateMounts),
// and unmounted when the pod is deleted; a pod that writes 4 MiB into an emptyDir on disk of
// sizeLimit 1Mi is evicted with upstream's message (emptyDirLimitEviction, from volume stats
// measured every 2 s).
func TestEmptyDirOnContainerd(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-emptydir", rt, "--volume-stats-agg-period", "2s")
	ns := namespace(t)
	createPod(t, ns, "over", withEmptyDir(busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c",
		"dd if=/dev/zero of=/cache/f bs=1M count=4; sleep 3600"), "cache", corev1.StorageMediumDefault, "1Mi"))
	pod := runningPod(t, ns, "mem", withEmptyDir(busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600"),
		"shm", corev1.StorageMediumMemory, "32Mi"))

	out, code := kubectl(t, "-n", ns, "exec", "mem", "--", "sh", "-c", "echo hi > /shm/f && cat /shm/f && grep ' /shm ' /proc/mounts")
	if fields := strings.Fields(out); code != 0 || len(fields) < 5 || fields[0] != "hi" || fields[2] != "/shm" || fields[3] != "tmpfs" ||
		!strings.Contains(fields[4], "size=32768k") {
		t.Errorf("inside the container: exit %d, %q; want the file written and /shm a tmpfs of size=32768k", code, out)
	}

	var evicted *corev1.Pod
	framework.Eventually(t, 2*time.Minute, "over Evicted", func() (bool, string) {
		evicted = getPod(t, ns, "over")
		return evicted.Status.Phase == corev1.PodFailed, describe(evicted)
	})
	if want := `Usage of EmptyDir volume "cache" exceeds the limit "1Mi". `; evicted.Status.Reason != "Evicted" || evicted.Status.Message != want {
		t.Errorf("over: %q %q, want Evicted %q", evicted.Status.Reason, evicted.Status.Message, want)
	}

	mountPoint := n.rootDir + "/pods/" + string(pod.UID) + "/volumes/kubernetes.io~empty-dir/shm"
	if !strings.Contains(mountInfo(t), " "+mountPoint+" ") {
		t.Fatalf("no mount at %s in our mount namespace", mountPoint)
	}
	if err := cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), "mem", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the tmpfs unmounted", func() (bool, string) {
		return !strings.Contains(mountInfo(t), " "+mountPoint+" "), "still mounted at " + mountPoint
	})
}

// mountInfo is /proc/self/mountinfo: the mounts of the namespace this test, containerd and
// minikubelet share.
func mountInfo(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

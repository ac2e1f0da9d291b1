package containerd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// csiHostpathImage is our CSI node driver, tools/csi-hostpath, built into an image by
// hack/containerd/images.sh --csi-hostpath (up.sh passes the flag on).
const csiHostpathImage = "docker.io/minikubelet/csi-hostpath:local"

// Our CSI driver runs as a DaemonSet in containerd, as a real node's drivers do, with no
// node-driver-registrar: it serves the registration socket itself. It gets the kubelet's
// plugins_registry, its plugins/<driver> directory (the CSI socket), the pods directory (the
// publish targets) and its data directory as hostPath volumes at the node's paths. No mount
// propagation: the driver publishes a volume as a link to its data directory, not a mount, and
// containerd resolves the link when it bind-mounts the target into the pod.
//
// The kubelet registers it (CSINode, the nodeid annotation); a static PV with a csi source and an
// inline csi volume are staged and published through it for a pod, the container's write lands
// in the driver's data directory, and when the pod goes both are unpublished (the static one
// unstaged too) — the driver's log, `kubectl logs`, says what the kubelet asked.
func testCSIDaemonSet(t *testing.T, n *node) {
	ns := namespace(t)
	name := "hostpath.csi." + ns
	dataDir := t.TempDir()
	createCSIDriver(t, name)
	runCSIDaemonSet(t, n, ns, name, dataDir)
	framework.Eventually(t, 2*time.Minute, "CSINode lists the driver", func() (bool, string) {
		c, err := cluster.Client.StorageV1().CSINodes().Get(context.Background(), n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, d := range c.Spec.Drivers {
			if d.Name == name && d.NodeID == n.name+"-id" {
				return true, ""
			}
		}
		return false, c.String()
	})
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Annotations["csi.volume.kubernetes.io/nodeid"]; !strings.Contains(got, `"`+name+`":"`+n.name+`-id"`) {
		t.Errorf("node annotation csi.volume.kubernetes.io/nodeid = %q, want %s → %s-id", got, name, n.name)
	}

	class := storageClass(t, ns)
	pv := createPV(t, class, ns+"-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
		Driver: name, VolumeHandle: "vol-" + ns}}, ns, "data")
	createClaim(t, ns, "data", class)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: name}}},
	}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "scratch", MountPath: "/scratch"}}
	pod := runningPod(t, ns, "web", spec)
	if out, code := kubectl(t, "-n", ns, "exec", "web", "--", "sh", "-c", "echo kept > /data/greeting && echo tmp > /scratch/f"); code != 0 {
		t.Fatalf("write through the csi mounts: exit %d\n%s", code, out)
	}
	if got, err := os.ReadFile(filepath.Join(dataDir, "vol-"+ns, "greeting")); err != nil || string(got) != "kept\n" {
		t.Fatalf("the driver's volume holds %q, %v; want the file the container wrote", got, err)
	}
	target := filepath.Join(n.rootDir, "pods", string(pod.UID), "volumes", "kubernetes.io~csi", pv.Name, "mount")
	waitDriverLog(t, ns, "stage and publish", "NodeStageVolume vol-"+ns+" ", "NodePublishVolume vol-"+ns+" "+target+" web", "NodePublishVolume csi-")

	if err := cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDriverLog(t, ns, "unpublish and unstage", "NodeUnpublishVolume vol-"+ns+" "+target, "NodeUnstageVolume vol-"+ns+" ", "NodeUnpublishVolume csi-")
	out, _ := kubectl(t, "-n", ns, "logs", "daemonset/csi-hostpath")
	t.Logf("kubectl logs daemonset/csi-hostpath:\n%s", out)
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the publish target %s is still there (%v)", target, err)
	}
	if got, err := os.ReadFile(filepath.Join(dataDir, "vol-"+ns, "greeting")); err != nil || string(got) != "kept\n" {
		t.Errorf("after the pod went the driver's volume holds %q, %v; want the data kept", got, err)
	}
}

// createCSIDriver makes the driver's CSIDriver object: no attach, pod info on mount, both
// lifecycle modes (Persistent for the PV, Ephemeral for the inline volume).
func createCSIDriver(t *testing.T, name string) {
	t.Helper()
	drv := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{
		AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true),
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}}
	if _, err := cluster.Client.StorageV1().CSIDrivers().Create(context.Background(), drv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// runCSIDaemonSet runs the driver as a DaemonSet on the node, with the node's directories at
// their own paths, and waits until its pod runs.
func runCSIDaemonSet(t *testing.T, n *node, ns, name, dataDir string) {
	t.Helper()
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways)
	c := &spec.Containers[0]
	c.Name, c.Image, c.Command = "driver", csiHostpathImage, nil
	c.Args = []string{"--name", name, "--root-dir", n.rootDir, "--node-id", n.name + "-id", "--data-dir", dataDir}
	for i, dir := range []string{filepath.Join(n.rootDir, "plugins_registry"), filepath.Join(n.rootDir, "plugins", name),
		filepath.Join(n.rootDir, "pods"), dataDir} {
		vol := "dir" + string(rune('0'+i))
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: dir})
	}
	labels := map[string]string{"app": "csi-hostpath"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "csi-hostpath"}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}}
	if _, err := cluster.Client.AppsV1().DaemonSets(ns).Create(context.Background(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the driver's pod Running", func() (bool, string) {
		list, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=csi-hostpath"})
		if err != nil || len(list.Items) != 1 {
			return false, "no pod yet"
		}
		p := &list.Items[0]
		return p.Spec.NodeName == n.name && p.Status.Phase == corev1.PodRunning && isReady(p), describe(p)
	})
}

// waitDriverLog waits until the driver's log (kubectl logs) has a line starting with each prefix.
func waitDriverLog(t *testing.T, ns, what string, prefixes ...string) {
	t.Helper()
	framework.Eventually(t, time.Minute, what+" in the driver's log", func() (bool, string) {
		out, code := kubectl(t, "-n", ns, "logs", "daemonset/csi-hostpath")
		if code != 0 {
			return false, out
		}
		for _, p := range prefixes {
			if !strings.HasPrefix(out, p) && !strings.Contains(out, "\n"+p) {
				return false, out
			}
		}
		return true, ""
	})
}

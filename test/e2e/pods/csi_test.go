package pods

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
	hostpath "github.com/minikubelet/minikubelet/tools/csi-hostpath/driver"
)

// startCSIDriver runs tools/csi-hostpath's driver beside the node, registering through the
// node's <root-dir>/plugins_registry as node-driver-registrar does, with a CSIDriver object
// that needs no attach, wants pod info and allows both lifecycle modes.
func startCSIDriver(t *testing.T, n *node, name string) *hostpath.Driver {
	t.Helper()
	registry := filepath.Join(n.rootDir, "plugins_registry")
	if err := os.MkdirAll(registry, 0o750); err != nil {
		t.Fatal(err)
	}
	d, err := hostpath.Start(hostpath.Config{Name: name, NodeID: n.name + "-id", Endpoint: filepath.Join(n.rootDir, "csi.sock"),
		RegistryDir: registry, DataDir: filepath.Join(n.rootDir, "csi-data"), Stage: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	drv := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{
		AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true),
		VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}}
	if _, err := cluster.Client.StorageV1().CSIDrivers().Create(context.Background(), drv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return d
}

// waitCalls waits until the driver has received a call starting with each prefix.
func waitCalls(t *testing.T, d *hostpath.Driver, what string, prefixes ...string) {
	t.Helper()
	framework.Eventually(t, time.Minute, what, func() (bool, string) {
		calls := d.Calls()
		for _, p := range prefixes {
			if !slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, p) }) {
				return false, strings.Join(calls, "\n")
			}
		}
		return true, ""
	})
}

// A CSI node driver registers through plugins_registry and appears in the node's CSINode
// (upstream nodeinfomanager); a static PV with a csi source, claimed by a pod, is staged and
// published (NodeStageVolume, NodePublishVolume with the pod's name from podInfoOnMount), the
// file the container writes is the driver's and outlives the pod, and the volume is unpublished
// and unstaged when the pod goes; an inline csi volume is published and unpublished with it.
func TestCSIDriverVolumes(t *testing.T) {
	n := startNode(t, "e2e-pods-csi")
	ns := namespace(t)
	name := "hostpath.csi." + ns
	d := startCSIDriver(t, n, name)
	framework.Eventually(t, time.Minute, "CSINode lists the driver", func() (bool, string) {
		c, err := cluster.Client.StorageV1().CSINodes().Get(context.Background(), n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(c.Spec.Drivers) == 1 && c.Spec.Drivers[0].Name == name && c.Spec.Drivers[0].NodeID == n.name+"-id", c.String()
	})
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"` + name + `":"` + n.name + `-id"}`; node.Annotations["csi.volume.kubernetes.io/nodeid"] != want {
		t.Errorf("node annotation csi.volume.kubernetes.io/nodeid = %q, want %s", node.Annotations["csi.volume.kubernetes.io/nodeid"], want)
	}
	class := storageClass(t, ns)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: ns + "-csi"}, Spec: corev1.PersistentVolumeSpec{
		StorageClassName: class, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, ClaimRef: &corev1.ObjectReference{Namespace: ns, Name: "data"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: name, VolumeHandle: "vol-" + ns}},
	}}
	if _, err := cluster.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: claimSpec(class)}
	if _, err := cluster.Client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := runCSIPod(t, n, ns, name)
	if out, err := cluster.KubectlOutput("exec", "-n", ns, "web", "--", "sh", "-c", "echo kept > /data/greeting"); err != nil {
		t.Fatalf("write through the csi mount: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(n.rootDir, "csi-data", "vol-"+ns, "greeting")); err != nil || string(got) != "kept\n" {
		t.Fatalf("the driver's volume holds %q, %v; want the file the container wrote", got, err)
	}
	waitCalls(t, d, "stage and publish", "NodeStageVolume vol-"+ns, "NodePublishVolume vol-"+ns+" "+
		filepath.Join(n.rootDir, "pods", string(first.UID), "volumes/kubernetes.io~csi", pv.Name, "mount")+" web",
		"NodePublishVolume csi-")
	if err := cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitCalls(t, d, "unpublish and unstage", "NodeUnpublishVolume vol-"+ns, "NodeUnstageVolume vol-"+ns, "NodeUnpublishVolume csi-")
	framework.Eventually(t, time.Minute, "web gone", func() (bool, string) {
		_, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), "web", metav1.GetOptions{})
		return err != nil, "still there"
	})
	runCSIPod(t, n, ns, name)
	if got := kubectlCat(t, ns, "web", "/data/greeting"); got != "kept\n" {
		t.Errorf("after the pod was re-created: %q, want kept", got)
	}
}

// runCSIPod runs the pod web with the claim data at /data and an inline csi volume at /scratch.
func runCSIPod(t *testing.T, n *node, ns, driver string) *corev1.Pod {
	t.Helper()
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: driver}}},
	}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "scratch", MountPath: "/scratch"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: spec}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return podRunning(t, ns, "web")
}

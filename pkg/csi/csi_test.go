package csi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	hostpath "github.com/minikubelet/minikubelet/tools/csi-hostpath/driver"
)

const driverName = "hostpath.csi.test"

// startDriver runs the test driver registered in a fresh root directory.
func startDriver(t *testing.T, m *Manager) *hostpath.Driver {
	t.Helper()
	if err := os.MkdirAll(m.registryDir(), 0o750); err != nil {
		t.Fatal(err)
	}
	d, err := hostpath.Start(hostpath.Config{Name: driverName, NodeID: "node-1-id", Endpoint: filepath.Join(m.cfg.RootDir, "csi.sock"),
		RegistryDir: m.registryDir(), DataDir: filepath.Join(m.cfg.RootDir, "data"), Stage: true})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newManager(t *testing.T, objects ...any) (*Manager, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}})
	for _, o := range objects {
		if d, ok := o.(*storagev1.CSIDriver); ok {
			if _, err := client.StorageV1().CSIDrivers().Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	root, err := os.MkdirTemp("", "csi") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	m, err := New(Config{RootDir: root, NodeName: "node-1", Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return m, client
}

// Registration (upstream RegisterPlugin → nodeinfomanager.InstallCSIDriver): the driver is in the
// CSINode with its node id and topology keys, the Node carries csi.volume.kubernetes.io/nodeid,
// the plugin is told it is registered; when its socket goes, both forget it.
func TestRegistrationKeepsCSINodeAndAnnotation(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client := newManager(t)
	d := startDriver(t, m)
	m.runOnce(ctx)
	if s := d.Registered(); s == nil || !s.PluginRegistered {
		t.Fatalf("registration status = %v, want registered", s)
	}
	csiNode, err := client.StorageV1().CSINodes().Get(ctx, "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := storagev1.CSINodeDriver{Name: driverName, NodeID: "node-1-id", TopologyKeys: []string{"topology.hostpath.csi/node"}}
	if len(csiNode.Spec.Drivers) != 1 || csiNode.Spec.Drivers[0].Name != want.Name || csiNode.Spec.Drivers[0].NodeID != want.NodeID ||
		!slices.Equal(csiNode.Spec.Drivers[0].TopologyKeys, want.TopologyKeys) {
		t.Fatalf("CSINode drivers = %+v, want [%+v]", csiNode.Spec.Drivers, want)
	}
	if len(csiNode.OwnerReferences) != 1 || csiNode.OwnerReferences[0].UID != "node-uid" {
		t.Errorf("CSINode owner = %+v, want the Node", csiNode.OwnerReferences)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	var ids map[string]string
	if err := json.Unmarshal([]byte(node.Annotations[NodeIDAnnotation]), &ids); err != nil || ids[driverName] != "node-1-id" {
		t.Fatalf("annotation %s = %q, want {%q: node-1-id}", NodeIDAnnotation, node.Annotations[NodeIDAnnotation], driverName)
	}
	if node.Labels["topology.hostpath.csi/node"] != "node-1-id" {
		t.Errorf("node labels = %v, want the driver's topology segment", node.Labels)
	}

	d.Stop() // the registration socket goes
	m.runOnce(ctx)
	csiNode, _ = client.StorageV1().CSINodes().Get(ctx, "node-1", metav1.GetOptions{})
	node, _ = client.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
	if len(csiNode.Spec.Drivers) != 0 || node.Annotations[NodeIDAnnotation] != "" {
		t.Fatalf("after deregistration: CSINode drivers %+v, annotation %q; want both empty", csiNode.Spec.Drivers, node.Annotations[NodeIDAnnotation])
	}
}

func testPod(uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + uid, Namespace: "default", UID: types.UID(uid)},
		Spec: corev1.PodSpec{ServiceAccountName: "default"}}
}

// A static PV with a csi source (upstream MountDevice → NodeStageVolume, SetUp →
// NodePublishVolume at pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount with pod info; TearDown →
// NodeUnpublishVolume, UnmountDevice → NodeUnstageVolume): what a pod wrote is there for the
// next pod.
func TestPersistentVolumeStagesPublishesAndKeepsData(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, _ := newManager(t, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driverName},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true)}})
	d := startDriver(t, m)
	defer d.Stop()
	m.runOnce(ctx)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: "vol-1"}}}}
	v := Volume{Name: "pv-1", PV: pv}
	pod := testPod("uid-1")
	target, err := m.SetUp(ctx, pod, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(m.cfg.RootDir, "pods/uid-1/volumes/kubernetes.io~csi/pv-1/mount"); target != want {
		t.Errorf("target = %s, want %s", target, want)
	}
	if err := os.WriteFile(filepath.Join(target, "kept"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.TearDown(ctx, pod.UID, v); err != nil {
		t.Fatal(err)
	}
	staging := m.stagingPath(source{driver: driverName, handle: "vol-1"})
	want := []string{"NodeStageVolume vol-1 " + staging, "NodePublishVolume vol-1 " + target + " web-uid-1",
		"NodeUnpublishVolume vol-1 " + target, "NodeUnstageVolume vol-1 " + staging}
	if got := d.Calls(); !slices.Equal(got, want) {
		t.Fatalf("driver calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Lstat(filepath.Dir(target)); !os.IsNotExist(err) {
		t.Errorf("volume directory still there after TearDown: %v", err)
	}
	target2, err := m.SetUp(ctx, testPod("uid-2"), v)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(target2, "kept")); err != nil || string(b) != "hello" {
		t.Fatalf("file written by the first pod: %q, %v; want hello", b, err)
	}
}

// An inline csi volume needs a CSIDriver listing Ephemeral (upstream supportsVolumeLifecycleMode);
// with it, it is published (not staged) and unpublished.
func TestInlineVolumeNeedsEphemeralMode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client := newManager(t, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: driverName},
		Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false)}})
	d := startDriver(t, m)
	defer d.Stop()
	m.runOnce(ctx)
	v := Volume{Name: "scratch", Inline: &corev1.CSIVolumeSource{Driver: driverName}}
	pod := testPod("uid-3")
	_, err := m.SetUp(ctx, pod, v)
	wantErr := `volume mode "Ephemeral" not supported by driver ` + driverName + ` (only supports ["Persistent"])`
	if err == nil || err.Error() != wantErr {
		t.Fatalf("SetUp error = %v, want %s", err, wantErr)
	}
	drv, _ := client.StorageV1().CSIDrivers().Get(ctx, driverName, metav1.GetOptions{})
	drv.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
	if _, err := client.StorageV1().CSIDrivers().Update(ctx, drv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	target, err := m.SetUp(ctx, pod, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.TearDown(ctx, pod.UID, v); err != nil {
		t.Fatal(err)
	}
	calls := d.Calls()
	if len(calls) != 2 || !strings.HasPrefix(calls[0], "NodePublishVolume csi-") || !strings.HasSuffix(calls[0], target+" -") ||
		!strings.HasPrefix(calls[1], "NodeUnpublishVolume csi-") {
		t.Fatalf("driver calls = %q, want one NodePublishVolume and one NodeUnpublishVolume of a csi-<sha256> handle", calls)
	}
}

// A driver whose CSIDriver requires attach waits for its VolumeAttachment (upstream
// waitForVolumeAttachment); nothing attached, SetUp fails and says so.
func TestAttachRequiredWithoutVolumeAttachment(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, _ := newManager(t) // no CSIDriver: attach required, as upstream defaults
	d := startDriver(t, m)
	defer d.Stop()
	m.runOnce(ctx)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-2"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: "vol-2"}}}}
	_, err := m.SetUp(ctx, testPod("uid-4"), Volume{Name: "pv-2", PV: pv})
	if err == nil || !strings.Contains(err.Error(), "attachRequired: true") {
		t.Fatalf("SetUp error = %v, want the missing VolumeAttachment explained", err)
	}
	if len(d.Calls()) != 0 {
		t.Errorf("driver calls = %q, want none before attach", d.Calls())
	}
}

// The Readonly of NodePublishVolume, and every container's mount (MountReadOnly): an inline
// volume's readOnly; for a PV the claim's readOnly or the PV's csi.readOnly.
func TestReadOnlyReachesNodePublish(t *testing.T) {
	pv := func(readOnly bool) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driverName, VolumeHandle: "h", ReadOnly: readOnly}}}}
	}
	inline := func(readOnly *bool) *corev1.CSIVolumeSource {
		return &corev1.CSIVolumeSource{Driver: driverName, ReadOnly: readOnly}
	}
	tests := []struct {
		name string
		v    Volume
		want bool
	}{
		{"PV read-write", Volume{Name: "pv-1", PV: pv(false)}, false},
		{"PV csi.readOnly", Volume{Name: "pv-1", PV: pv(true)}, true},
		{"claim readOnly", Volume{Name: "pv-1", PV: pv(false), ReadOnly: true}, true},
		{"inline unset", Volume{Name: "s", Inline: inline(nil)}, false},
		{"inline readOnly: false", Volume{Name: "s", Inline: inline(ptr.To(false))}, false},
		{"inline readOnly: true", Volume{Name: "s", Inline: inline(ptr.To(true))}, true},
	}
	for _, tc := range tests {
		s, err := sourceOf("uid-1", tc.v)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.readOnly != tc.want || tc.v.MountReadOnly() != tc.want {
			t.Errorf("%s: NodePublishVolume Readonly = %v, MountReadOnly = %v, want %v", tc.name, s.readOnly, tc.v.MountReadOnly(), tc.want)
		}
	}
}

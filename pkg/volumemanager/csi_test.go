package volumemanager

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/csi"
)

// recordingCSI records the volumes handed to pkg/csi. The reconciler mounts a pod's volumes in
// parallel operations, as upstream's operation executor does, so the record is locked.
type recordingCSI struct {
	mu              sync.Mutex
	setUp, tornDown []csi.Volume
}

func (r *recordingCSI) SetUp(_ context.Context, _ *corev1.Pod, v csi.Volume) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setUp = append(r.setUp, v)
	return "/target/" + v.Name, nil
}

func (r *recordingCSI) TearDown(_ context.Context, _ types.UID, v csi.Volume) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tornDown = append(r.tornDown, v)
	return nil
}

// A csi PV is named after the PV (upstream's specVolumeID: kubernetes.io~csi/<pv>), an inline
// csi volume after the pod's volume; without CSI configured both stay "no volume plugin matched".
func TestCSIPluginPicksCSIVolumes(t *testing.T) {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}}}
	claimed := volumeSpec{volume: &corev1.Volume{Name: "data"}, pv: pv, readOnly: true}
	inline := volumeSpec{volume: &corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}}}
	rec := &recordingCSI{}
	plugins := []plugin{projectorPlugin{}, localPlugin{}, csiPlugin{volumes: rec}}
	for _, spec := range []volumeSpec{claimed, inline} {
		p, err := findPlugin(plugins, spec)
		if err != nil {
			t.Fatalf("%s: %v", spec.name(), err)
		}
		if _, err := p.setUp(t.Context(), &corev1.Pod{}, spec); err != nil {
			t.Fatal(err)
		}
		if err := p.tearDown("uid", spec); err != nil {
			t.Fatal(err)
		}
		if _, err := findPlugin(plugins[:2], spec); err == nil {
			t.Errorf("%s: found a plugin without CSI configured", spec.name())
		}
	}
	if len(rec.setUp) != 2 || rec.setUp[0].Name != "pv-1" || rec.setUp[0].PV != pv || !rec.setUp[0].ReadOnly ||
		rec.setUp[1].Name != "scratch" || rec.setUp[1].Inline == nil || len(rec.tornDown) != 2 {
		t.Fatalf("set up %+v, torn down %+v; want pv-1 (read-only, the PV) then scratch (inline), both torn down", rec.setUp, rec.tornDown)
	}
}

// A csi volume's readOnly reaches the container's mount (upstream makeMounts with the mounter's
// GetAttributes().ReadOnly): the PV's csi.readOnly, or an inline volume's readOnly, not only the
// claim's.
func TestCSIReadOnlyReachesMounts(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pvRO := hostPathPV("pv-ro", "ro", "")
	pvRO.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h1", ReadOnly: true}}
	pvRW := hostPathPV("pv-rw", "rw", "")
	pvRW.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h2"}}
	tm := newTestManager(t, boundClaim("ro", "pv-ro"), pvRO, boundClaim("rw", "pv-rw"), pvRW)
	tm.plugins = append(tm.plugins, csiPlugin{volumes: &recordingCSI{}})
	inline := func(name string, readOnly *bool) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d", ReadOnly: readOnly}}}
	}
	tm.addPod(testPod("uid-1", claimVolume("pv-ro", "ro", false), claimVolume("pv-rw", "rw", false),
		inline("inline-ro", ptr.To(true)), inline("inline-rw", nil)))
	tm.turn(ctx)
	mounted := tm.GetMountedVolumesForPod("uid-1")
	for name, want := range map[string]bool{"pv-ro": true, "pv-rw": false, "inline-ro": true, "inline-rw": false} {
		if got, ok := mounted[name]; !ok || got.ReadOnly != want {
			t.Errorf("%s = %+v (set up: %v), want ReadOnly %v", name, got, ok, want)
		}
	}
}

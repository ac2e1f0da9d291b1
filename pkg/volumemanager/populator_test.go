package volumemanager

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// Upstream's populator resolves a claim to its bound PV, refuses what it cannot resolve with
// the errors WaitForAttachAndMount returns, and refuses an ephemeral volume's claim that the
// pod does not control.
func TestPopulatorResolvesClaims(t *testing.T) {
	pending := boundClaim("pending", "")
	pending.Status.Phase = corev1.ClaimPending
	owner := testPod("uid-1")
	owned := boundClaim("web-0-scratch", "pv-eph")
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web-0", UID: "uid-1", Controller: ptr.To(true)}}
	notOwned := boundClaim("web-0-stolen", "pv-eph")
	wrongRef := hostPathPV("pv-other", "someone-else", "/tmp/x")
	csiPV := hostPathPV("pv-csi", "csi", "")
	csiPV.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}
	objects := []runtime.Object{pending, owned, notOwned, boundClaim("data", "pv-data"), hostPathPV("pv-data", "data", "/tmp/data"),
		hostPathPV("pv-eph", "web-0-scratch", "/tmp/eph"), boundClaim("wrong", "pv-other"), wrongRef, boundClaim("csi", "pv-csi"), csiPV}
	ephemeral := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}}
	}
	tests := []struct {
		name    string
		vol     corev1.Volume
		wantErr string // "" : the volume is desired
		wantPV  string
	}{
		{"bound claim", claimVolume("v", "data", true), "", "pv-data"},
		{"claim not found", claimVolume("v", "nope", false),
			`error processing PVC shop/nope: failed to fetch PVC from API server: persistentvolumeclaims "nope" not found`, ""},
		{"claim not bound", claimVolume("v", "pending", false), "error processing PVC shop/pending: PVC is not bound", ""},
		{"PV bound to another claim", claimVolume("v", "wrong", false),
			"error processing PVC shop/wrong: found PV object pv-other but its pv.Spec.ClaimRef.UID claim-someone-else does not point to claim.UID claim-wrong", ""},
		{"ephemeral, claim owned by the pod", ephemeral("scratch"), "", "pv-eph"},
		{"ephemeral, claim not owned by the pod", ephemeral("stolen"), "PVC shop/web-0-stolen was not created for pod shop/web-0 (pod is not owner)", ""},
		{"unsupported inline type", corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}},
			`failed to get Plugin from volumeSpec for volume "v" err=no volume plugin matched: volume type nfs is not supported by minikubelet (docs/features.md#volumes lists what is supported)`, ""},
		{"unsupported PV type", claimVolume("v", "csi", false),
			`failed to get Plugin from volumeSpec for volume "pv-csi" err=no volume plugin matched: PersistentVolume "pv-csi" is of type csi, which minikubelet does not support`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			tm := newTestManager(t, objects...)
			pod := owner.DeepCopy()
			pod.Spec.Volumes = []corev1.Volume{tc.vol}
			tm.addPod(pod)
			tm.populateOnce(ctx)
			errs := tm.dsw.popPodErrors(pod.UID)
			desired, _ := tm.dsw.getPod(pod.UID)
			if tc.wantErr != "" {
				if len(errs) != 1 || !strings.HasPrefix(errs[0], tc.wantErr) {
					t.Fatalf("errors = %q, want one starting %q", errs, tc.wantErr)
				}
				if _, ok := desired.volumes[tc.vol.Name]; ok {
					t.Error("a volume that failed is desired")
				}
				return
			}
			if len(errs) != 0 {
				t.Fatalf("errors = %q, want none", errs)
			}
			v, ok := desired.volumes[tc.vol.Name]
			if !ok || v.spec.pv == nil || v.spec.pv.Name != tc.wantPV {
				t.Fatalf("desired volume = %+v, want bound to %s", v, tc.wantPV)
			}
			if tc.vol.PersistentVolumeClaim != nil && v.spec.readOnly != tc.vol.PersistentVolumeClaim.ReadOnly {
				t.Errorf("readOnly = %v, want the claim's", v.spec.readOnly)
			}
		})
	}
}

// A pod is processed once; a failed one again each turn, until it succeeds. A stopped pod leaves
// the desired state, and a pod stopping is never added.
func TestPopulatorAddsAndRemovesPods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tm := newTestManager(t)
	pod := testPod("uid-1", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	stopping := testPod("uid-2", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	tm.addPod(pod)
	tm.addPod(stopping)
	tm.pods.stopped["uid-2"] = true
	tm.populateOnce(ctx)
	if _, ok := tm.dsw.getPod("uid-1"); !ok {
		t.Fatal("a pod that should run is not desired")
	}
	if _, ok := tm.dsw.getPod("uid-2"); ok {
		t.Error("a stopping pod was added")
	}
	relabeled := pod.DeepCopy()
	relabeled.Labels = map[string]string{"tier": "front"}
	tm.pods.pods[0] = relabeled
	tm.populateOnce(ctx)
	if p, _ := tm.dsw.getPod("uid-1"); p.pod.Labels["tier"] != "front" {
		t.Error("the desired pod did not follow the pod manager's latest object (its labels)")
	}
	tm.pods.stopped["uid-1"] = true
	tm.populateOnce(ctx)
	if _, ok := tm.dsw.getPod("uid-1"); ok {
		t.Error("a pod whose containers are gone is still desired")
	}
}

// A claim lookup that fails once, after the volume is set up, is the pod's error for
// WaitForAttachAndMount but leaves the volume desired: the reconciler does not tear down (for
// CSI: NodeUnpublish) a volume the running container uses (upstream's populator only adds).
func TestPopulatorKeepsVolumeOnTransientError(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pv := hostPathPV("pv-csi", "data", "")
	pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}
	tm := newTestManager(t, boundClaim("data", "pv-csi"), pv)
	rec := &recordingCSI{}
	tm.plugins = append(tm.plugins, csiPlugin{volumes: rec})
	tm.addPod(testPod("uid-1", claimVolume("data", "data", false)))
	tm.turn(ctx)
	if _, ok := tm.GetMountedVolumesForPod("uid-1")["data"]; !ok || len(rec.setUp) != 1 {
		t.Fatalf("the CSI volume is not set up: %+v", rec.setUp)
	}

	failures := 1
	tm.cfg.Client.(*fake.Clientset).PrependReactor("get", "persistentvolumeclaims", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failures == 0 {
			return false, nil, nil
		}
		failures--
		return true, nil, errors.New("connection refused")
	})
	tm.ReprocessPod("uid-1") // as WaitForAttachAndMount does on every pod sync
	tm.turn(ctx)
	if errs := tm.dsw.popPodErrors("uid-1"); len(errs) != 1 || !strings.Contains(errs[0], "connection refused") {
		t.Errorf("pod errors = %q, want the failed claim lookup", errs)
	}
	if _, ok := tm.GetMountedVolumesForPod("uid-1")["data"]; !ok || len(rec.tornDown) != 0 {
		t.Fatalf("a failed claim lookup tore down a volume in use (%d TearDown calls)", len(rec.tornDown))
	}
	tm.turn(ctx) // processed again: the lookup works
	if p, _ := tm.dsw.getPod("uid-1"); p == nil || p.volumes["data"].spec.pv == nil || len(rec.tornDown) != 0 {
		t.Fatalf("desired = %v, %d TearDown calls; want the volume desired, never torn down", p != nil, len(rec.tornDown))
	}
}

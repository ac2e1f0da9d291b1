package volumemanager

// The populator (upstream: pkg/kubelet/volumemanager/populator/desired_state_of_world_populator.go):
// every 100 ms, the pods the pod manager holds become the desired state of world, a claim
// resolved to its bound PersistentVolume; pods whose containers are gone leave it.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// pvcProtectionFinalizer is the finalizer that keeps a claim in use from going (upstream
// util.PVCProtectionFinalizer).
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// populateOnce is one turn of the populator (upstream populatorLoop): add the pods that should
// run, then remove those whose containers are gone.
func (m *Manager) populateOnce(ctx context.Context) {
	m.findAndAddNewPods(ctx)
	m.findAndRemoveDeletedPods()
}

// findAndAddNewPods processes each pod that should run and has not been processed (or was asked
// again by ReprocessPod); a processed pod only gets its latest object.
func (m *Manager) findAndAddNewPods(ctx context.Context) {
	for _, pod := range m.cfg.Pods.GetPods() {
		if m.cfg.PodState.ShouldPodContainersBeTerminating(pod.UID) {
			continue // a stopping pod gets no new volume (upstream: the same check)
		}
		m.mu.Lock()
		done := m.processed[pod.UID]
		m.mu.Unlock()
		if done {
			m.dsw.updatePodObject(pod)
			continue
		}
		m.processPodVolumes(ctx, pod)
	}
}

// processPodVolumes adds the pod's volumes to the desired state of world. A volume that cannot
// be resolved (a claim not bound yet, a type without plugin) is recorded as the pod's error, for
// WaitForAttachAndMount, and the pod is processed again next turn; a volume already desired
// keeps its entry then (upstream's populator only adds: a brief API error must not make the
// reconciler tear down a volume a running container uses). Volumes already set up are marked
// for remount: a pod sync refreshes its Secrets, ConfigMaps and downward API files.
func (m *Manager) processPodVolumes(ctx context.Context, pod *corev1.Pod) {
	logger := klog.FromContext(ctx)
	prev, _ := m.dsw.getPod(pod.UID)
	volumes := make(map[string]volumeToMount, len(pod.Spec.Volumes))
	ok := true
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		spec, err := m.createVolumeSpec(ctx, vol, pod)
		var p plugin
		if err == nil {
			p, err = findPlugin(m.plugins, spec)
		}
		if err != nil {
			logger.V(2).Info("Error processing volume", "pod", klog.KObj(pod), "volumeName", vol.Name, "err", err)
			m.dsw.addErrorToPod(pod.UID, err.Error())
			ok = false
			if old, desired := prev.volume(vol.Name); desired {
				volumes[vol.Name] = old
			}
			continue
		}
		volumes[vol.Name] = volumeToMount{outerName: vol.Name, spec: spec, plugin: p}
	}
	m.dsw.setPod(pod, volumes)
	m.asw.markRemountRequired(pod.UID)
	if ok {
		m.dsw.popPodErrors(pod.UID) // all went well this time
		m.mu.Lock()
		m.processed[pod.UID] = true
		m.mu.Unlock()
	}
}

// findAndRemoveDeletedPods removes the pods whose containers are all gone: the reconciler then
// tears their volumes down. A pod still stopping keeps its volumes.
func (m *Manager) findAndRemoveDeletedPods() {
	for uid := range m.dsw.getPods() {
		if !m.cfg.PodState.ShouldPodRuntimeBeRemoved(uid) {
			continue
		}
		m.dsw.deletePod(uid)
		m.mu.Lock()
		delete(m.processed, uid)
		m.mu.Unlock()
	}
}

// createVolumeSpec is the volume as its plugin sees it: an inline volume as it is, a
// persistentVolumeClaim or a generic ephemeral volume as the PersistentVolume its claim is bound
// to, with upstream's errors while it is not.
func (m *Manager) createVolumeSpec(ctx context.Context, vol *corev1.Volume, pod *corev1.Pod) (volumeSpec, error) {
	claim := vol.PersistentVolumeClaim
	isEphemeral := claim == nil && vol.Ephemeral != nil
	if isEphemeral {
		// The ephemeral-volume controller creates the claim <pod>-<volume>, owned by the pod.
		claim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pod.Name + "-" + vol.Name}
	}
	if claim == nil {
		return volumeSpec{volume: vol}, nil
	}
	pvc, err := m.getPVC(ctx, pod.Namespace, claim.ClaimName)
	if err != nil {
		return volumeSpec{}, fmt.Errorf("error processing PVC %s/%s: %v", pod.Namespace, claim.ClaimName, err)
	}
	if isEphemeral && (pvc.Namespace != pod.Namespace || !metav1.IsControlledBy(pvc, pod)) {
		return volumeSpec{}, fmt.Errorf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name)
	}
	pv, err := m.getPV(ctx, pvc.Spec.VolumeName, pvc.UID)
	if err != nil {
		return volumeSpec{}, fmt.Errorf("error processing PVC %s/%s: %v", pod.Namespace, claim.ClaimName, err)
	}
	if mode := pv.Spec.VolumeMode; mode != nil && *mode != corev1.PersistentVolumeFilesystem {
		return volumeSpec{}, fmt.Errorf("volume %s has volumeMode %s, but is specified in volumeMounts", vol.Name, *mode)
	}
	return volumeSpec{volume: vol, pv: pv, readOnly: claim.ReadOnly}, nil
}

// getPVC returns the claim if a pod may use it: bound, and not being deleted without the
// protection finalizer (upstream getPVCExtractPV).
func (m *Manager) getPVC(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	pvc, err := m.cfg.Client.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to fetch PVC from API server: %v", err)
	}
	switch {
	case pvc.DeletionTimestamp != nil && !slices.Contains(pvc.Finalizers, pvcProtectionFinalizer):
		return nil, errors.New("PVC is being deleted")
	case pvc.Status.Phase != corev1.ClaimBound:
		return nil, errors.New("PVC is not bound")
	case pvc.Spec.VolumeName == "":
		return nil, errors.New("PVC has empty pvc.Spec.VolumeName")
	}
	return pvc, nil
}

// getPV returns the PersistentVolume bound to the claim (upstream getPVSpec).
func (m *Manager) getPV(ctx context.Context, name string, claimUID types.UID) (*corev1.PersistentVolume, error) {
	pv, err := m.cfg.Client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to fetch PV %s from API server: %v", name, err)
	}
	if pv.Spec.ClaimRef == nil {
		return nil, fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", name)
	}
	if pv.Spec.ClaimRef.UID != claimUID {
		return nil, fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", name, pv.Spec.ClaimRef.UID, claimUID)
	}
	return pv, nil
}

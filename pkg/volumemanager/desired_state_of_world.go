package volumemanager

// The desired state of world (upstream: pkg/kubelet/volumemanager/cache/desired_state_of_world.go):
// the volumes each pod that should run needs, written by the populator, read by the reconciler
// and by WaitForAttachAndMount.

import (
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// volumeSpec is one volume as a plugin sees it (upstream: volume.Spec): a pod's inline volume,
// or the PersistentVolume its claim is bound to.
type volumeSpec struct {
	volume   *corev1.Volume           // the pod's volume; for a claim, the pod's volume too (its name)
	pv       *corev1.PersistentVolume // the bound PV of a persistentVolumeClaim or ephemeral volume; nil inline
	readOnly bool                     // the claim's readOnly: the container mounts it read-only
}

// name is the volume's name in upstream's events: the PV's name for a claim, else the pod's
// volume name (upstream Spec.Name).
func (s volumeSpec) name() string {
	if s.pv != nil {
		return s.pv.Name
	}
	return s.volume.Name
}

// volumeToMount is one volume a pod needs.
type volumeToMount struct {
	outerName string // the pod's name for the volume (upstream OuterVolumeSpecName)
	spec      volumeSpec
	plugin    plugin
}

// podToMount is a pod that should run, with the volumes it needs, by outer name.
type podToMount struct {
	pod     *corev1.Pod
	volumes map[string]volumeToMount
}

// desiredStateOfWorld is safe for concurrent use. The reconciler may keep the returned values: a
// pod's entry is replaced, never modified in place.
type desiredStateOfWorld struct {
	mu   sync.Mutex
	pods map[types.UID]*podToMount
	// errors are the populator's failures per pod, as sentences, until WaitForAttachAndMount pops
	// them (upstream podErrors).
	errors map[types.UID][]string
}

func newDesiredStateOfWorld() *desiredStateOfWorld {
	return &desiredStateOfWorld{pods: map[types.UID]*podToMount{}, errors: map[types.UID][]string{}}
}

// volume returns the pod's entry for a volume; p may be nil (a pod not desired yet).
func (p *podToMount) volume(outerName string) (volumeToMount, bool) {
	if p == nil {
		return volumeToMount{}, false
	}
	v, ok := p.volumes[outerName]
	return v, ok
}

// setPod records the volumes of a pod, replacing what it had: the caller passes the entries it
// keeps (a volume that failed to resolve this time keeps its previous entry), so only a volume
// gone from the pod's spec leaves a pod that stays.
func (d *desiredStateOfWorld) setPod(pod *corev1.Pod, volumes map[string]volumeToMount) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pods[pod.UID] = &podToMount{pod: pod, volumes: volumes}
}

// updatePodObject keeps the pod's latest object (its labels and annotations reach downwardAPI
// files at the next remount) without processing its volumes again.
func (d *desiredStateOfWorld) updatePodObject(pod *corev1.Pod) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.pods[pod.UID]; ok && p.pod != pod {
		d.pods[pod.UID] = &podToMount{pod: pod, volumes: p.volumes}
	}
}

// deletePod forgets a pod: the reconciler tears its volumes down.
func (d *desiredStateOfWorld) deletePod(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pods, uid)
	delete(d.errors, uid)
}

// getPod returns the pod's entry; the caller must not modify it.
func (d *desiredStateOfWorld) getPod(uid types.UID) (*podToMount, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.pods[uid]
	return p, ok
}

// getPods returns every pod's entry; the caller must not modify them.
func (d *desiredStateOfWorld) getPods() map[types.UID]*podToMount {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.pods)
}

// addErrorToPod records a populator failure once (upstream AddErrorToPod keeps a set).
func (d *desiredStateOfWorld) addErrorToPod(uid types.UID, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.errors[uid], msg) {
		d.errors[uid] = append(d.errors[uid], msg)
	}
}

// popPodErrors returns the pod's recorded failures, sorted, and forgets them.
func (d *desiredStateOfWorld) popPodErrors(uid types.UID) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	errs := d.errors[uid]
	delete(d.errors, uid)
	slices.Sort(errs)
	return errs
}

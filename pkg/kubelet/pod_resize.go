package kubelet

// In-place pod resize, the kubelet's part (upstream: pkg/kubelet/allocation/allocation_manager.go
// handlePodResourcesResize, canAdmitPod, the allocated_pods_state checkpoint; pkg/kubelet/status
// status_manager.go SetPodResizePendingCondition / SetPodResizeInProgressCondition).
//
// The API server's pods/resize subresource (`kubectl patch --subresource resize`) changes a
// running pod's container requests and limits. The kubelet decides whether the node can give
// them: if the pod, with its new requests, fits in the allocatable beside what the other active
// pods were given, the new resources are "allocated" — recorded in a checkpoint file so a
// restarted kubelet still knows — and kuberuntime applies them (resize.go there: CRI
// UpdateContainerResources, or a restart by resizePolicy). Otherwise the allocation stays, the
// pod shows PodResizePending (reason Deferred, the admission's message) and the resize is
// retried on every sync. Until the runtime applies what was allocated the pod shows
// PodResizeInProgress. Every other part of the kubelet sees the allocated pod, not the spec.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/atomicfile"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// allocationFile is the checkpoint's name under --root-dir (upstream's allocated_pods_state).
const allocationFile = "allocated_pods_state"

// Upstream's Event reasons of a resize (pkg/kubelet/events).
const (
	eventResizeDeferred   = "ResizeDeferred"
	eventResizeInfeasible = "ResizeInfeasible"
	eventResizeStarted    = "ResizeStarted"
	eventResizeCompleted  = "ResizeCompleted"
	eventResizeError      = "ResizeError"
)

// allocations is what each admitted pod was given: per pod UID, per container name (init and
// regular), its requests and limits. Safe for concurrent use; every change is written to path
// atomically, mode 0600, before it is used.
type allocations struct {
	path   string
	mu     sync.Mutex
	loaded bool
	pods   map[types.UID]map[string]corev1.ResourceRequirements
}

// loadLocked reads the checkpoint once; a missing file is an empty one.
func (a *allocations) loadLocked() error {
	if a.loaded {
		return nil
	}
	a.pods = map[types.UID]map[string]corev1.ResourceRequirements{}
	data, err := os.ReadFile(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		a.loaded = true
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &a.pods); err != nil {
		return fmt.Errorf("allocation checkpoint %s is corrupt (remove it; the kubelet then allocates each pod's spec): %w", a.path, err)
	}
	a.loaded = true
	return nil
}

func (a *allocations) saveLocked() error {
	data, err := json.Marshal(a.pods)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(a.path, data, 0o600)
}

// get returns the pod's allocation, or nil when it has none yet.
func (a *allocations) get(uid types.UID) (map[string]corev1.ResourceRequirements, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.loadLocked(); err != nil {
		return nil, err
	}
	return a.pods[uid], nil
}

// set records pod's spec resources as its allocation.
func (a *allocations) set(pod *corev1.Pod) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.loadLocked(); err != nil {
		return err
	}
	a.pods[pod.UID] = specResources(pod)
	return a.saveLocked()
}

// remove forgets a pod that no longer runs.
func (a *allocations) remove(uid types.UID) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.loadLocked(); err != nil {
		return err
	}
	if _, ok := a.pods[uid]; !ok {
		return nil
	}
	delete(a.pods, uid)
	return a.saveLocked()
}

// specResources is what pod's spec asks for, per container (init and regular).
func specResources(pod *corev1.Pod) map[string]corev1.ResourceRequirements {
	out := map[string]corev1.ResourceRequirements{}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		out[c.Name] = *c.Resources.DeepCopy()
	}
	return out
}

// withAllocation returns pod with its containers' resources as alloc gives them (a copy), and
// whether they differ from the spec's. A container alloc does not name keeps its spec. Pure.
func withAllocation(pod *corev1.Pod, alloc map[string]corev1.ResourceRequirements) (*corev1.Pod, bool) {
	if alloc == nil || apiequality.Semantic.DeepEqual(alloc, specResources(pod)) {
		return pod, false
	}
	out := pod.DeepCopy()
	for _, list := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			if r, ok := alloc[list[i].Name]; ok {
				list[i].Resources = *r.DeepCopy()
			}
		}
	}
	return out, true
}

// resizePending is the PodResizePending condition of a resize the node cannot give now. Upstream
// sets every reason but Infeasible to Deferred.
func resizePending(pod *corev1.Pod, reason, message string) *corev1.PodCondition {
	if reason != corev1.PodReasonInfeasible {
		reason = corev1.PodReasonDeferred
	}
	return &corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, ObservedGeneration: pod.Generation}
}

// decideResize is the resize admission of pod (its spec is what is asked) given its allocation
// and the other active pods as allocated: allocate the spec (true), or keep the allocation, with
// a PodResizePending condition when the spec asks for what the node cannot give now. A pod with
// no allocation yet is allocated its spec (it was just admitted). The check is admission's
// resource fit (admitResources), as upstream's canAdmitPod runs the admit handlers; a resize over
// the node's allocatable is refused by the API server first (its PodResize admission plugin).
// Pure.
func decideResize(pod *corev1.Pod, alloc map[string]corev1.ResourceRequirements, others []*corev1.Pod, allocatable corev1.ResourceList) (bool, *corev1.PodCondition) {
	if alloc == nil {
		return true, nil
	}
	if _, changed := withAllocation(pod, alloc); !changed {
		return false, nil
	}
	if a := admitResources(pod, others, allocatable); !a.admit {
		return false, resizePending(pod, a.reason, a.message)
	}
	return true, nil
}

// handlePodResize is SyncPod's first step (upstream allocation manager handlePodResourcesResize):
// it decides a pending resize and returns the pod as allocated — what kuberuntime must run and
// the status must report — and the PodResizePending condition, if any. If the checkpoint cannot
// be read or written, the pod keeps what it has and the error says why.
func (k *Kubelet) handlePodResize(pod *corev1.Pod) (*corev1.Pod, *corev1.PodCondition, error) {
	k.admitMu.Lock()
	defer k.admitMu.Unlock()
	alloc, err := k.allocation.get(pod.UID)
	if err != nil {
		return pod, nil, err
	}
	var others []*corev1.Pod
	for _, other := range k.activePods() {
		if other.UID != pod.UID {
			others = append(others, k.allocatedPod(other))
		}
	}
	allocate, pending := decideResize(pod, alloc, others, k.allocatable)
	if allocate {
		if err := k.allocation.set(pod); err != nil {
			allocated, _ := withAllocation(pod, alloc)
			return allocated, nil, err
		}
		k.setResizePending(pod.UID, nil)
		if alloc != nil {
			k.resizeStarted(pod)
		}
		return pod, nil, nil
	}
	allocated, _ := withAllocation(pod, alloc)
	if pending != nil && k.setResizePending(pod.UID, pending) {
		reason := eventResizeDeferred
		if pending.Reason == corev1.PodReasonInfeasible {
			reason = eventResizeInfeasible
		}
		k.recorder.Eventf(pod, corev1.EventTypeWarning, reason, "%s",
			resizeEventMessage(pod, pod.Generation, "Pod resize "+pending.Reason, pending.Message))
	} else if pending == nil {
		k.setResizePending(pod.UID, nil)
	}
	return allocated, pending, nil
}

// resizeStarted marks a newly allocated resize in progress at the pod's generation — an error
// of an earlier one goes — with a ResizeStarted Event (upstream handlePodResourcesResize).
func (k *Kubelet) resizeStarted(pod *corev1.Pod) {
	k.clearResizeInProgress(pod.UID)
	k.setResizeInProgress(pod.UID, "", "", pod.Generation)
	k.recorder.Eventf(pod, corev1.EventTypeNormal, eventResizeStarted, "%s",
		resizeEventMessage(pod, pod.Generation, "Pod resize started", ""))
}

// allocatedPod is pod as allocated (the spec when it has no allocation or it cannot be read).
func (k *Kubelet) allocatedPod(pod *corev1.Pod) *corev1.Pod {
	alloc, err := k.allocation.get(pod.UID)
	if err != nil {
		return pod
	}
	allocated, _ := withAllocation(pod, alloc)
	return allocated
}

// setResizePending records the pod's pending condition and reports whether its reason, message
// or generation changed (then the Event is sent once, as upstream).
func (k *Kubelet) setResizePending(uid types.UID, c *corev1.PodCondition) bool {
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	old := k.resizePending[uid]
	if c == nil {
		delete(k.resizePending, uid)
		return old != nil
	}
	k.resizePending[uid] = c
	return old == nil || old.Reason != c.Reason || old.Message != c.Message || old.ObservedGeneration != c.ObservedGeneration
}

// resizeEventMessage is upstream's resize Event message: a prefix, then the spec's resources
// per container, the resize's generation and the error as JSON.
func resizeEventMessage(pod *corev1.Pod, generation int64, prefix, errMsg string) string {
	type containerAllocation struct {
		Name      string                      `json:"name"`
		Resources corev1.ResourceRequirements `json:"resources,omitempty"`
	}
	summary := struct {
		InitContainers []containerAllocation `json:"initContainers,omitempty"`
		Containers     []containerAllocation `json:"containers,omitempty"`
		Generation     int64                 `json:"generation"`
		Error          string                `json:"error,omitempty"`
	}{Generation: generation, Error: errMsg}
	for _, c := range pod.Spec.InitContainers {
		summary.InitContainers = append(summary.InitContainers, containerAllocation{c.Name, c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		summary.Containers = append(summary.Containers, containerAllocation{c.Name, c.Resources})
	}
	data, err := json.Marshal(summary)
	if err != nil {
		return prefix
	}
	return prefix + ": " + string(data)
}

// refreshAfterResize reads the pod's status from the runtime after an in-place update and puts
// it in the pod cache: a resize changes no container's state, so the PLEG would not notice it
// and PodResizeInProgress would stay until the next resync (upstream: kubelet.go SyncPod's
// pleg.UpdateCache while a resize is in progress). On error it returns the old status.
func (k *Kubelet) refreshAfterResize(ctx context.Context, pod *corev1.Pod, old *kubecontainer.PodStatus) *kubecontainer.PodStatus {
	now := k.clock.Now()
	rs, err := k.containerRuntime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Cannot read the pod's status after a resize", "pod", klog.KObj(pod))
		return old
	}
	k.podCache.Set(pod.UID, rs, nil, now)
	return rs
}

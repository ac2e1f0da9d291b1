package kubelet

// What the status says of resources and resizes (upstream: kubelet_pods.go
// convertToAPIContainerStatuses' Resources and AllocatedResources; status_manager.go
// GetPodResizeConditions, SetPodResizeInProgressCondition, ClearPodResizeInProgressCondition;
// kubelet.go SyncPod's ResizeCompleted and ResizeError Events).

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// setStatusResources fills cs.allocatedResources with the allocated container c's requests,
// and, for a running container, cs.resources with its requests and limits (c is the container
// as allocated: the status says what the node gave, not what the spec asks). Pure.
func setStatusResources(cs *corev1.ContainerStatus, c *corev1.Container, latest *kubecontainer.ContainerStatus) {
	if len(c.Resources.Requests) > 0 {
		cs.AllocatedResources = c.Resources.Requests.DeepCopy()
	}
	if latest == nil || latest.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	r := &corev1.ResourceRequirements{}
	if len(c.Resources.Requests) > 0 {
		r.Requests = c.Resources.Requests.DeepCopy()
	}
	if len(c.Resources.Limits) > 0 {
		r.Limits = c.Resources.Limits.DeepCopy()
	}
	cs.Resources = r
}

// resizeConditions are the pod's resize conditions as the kubelet holds them (upstream: status
// manager GetPodResizeConditions): PodResizePending while a resize waits, PodResizeInProgress
// from its allocation until the runtime has applied it. Neither once the resize is done. Pure.
func resizeConditions(pending, inProgress *corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range []*corev1.PodCondition{pending, inProgress} {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// nextResizeInProgress is the PodResizeInProgress condition after setting reason and message at
// generation gen on old (nil when there is none), and whether its reason or message changed
// (upstream status manager SetPodResizeInProgressCondition). An empty reason and message keep
// old's; the generation is always old's: a new allocation clears the condition first to move
// it. Pure.
func nextResizeInProgress(old *corev1.PodCondition, reason, message string, gen int64) (*corev1.PodCondition, bool) {
	if old != nil {
		if reason == "" && message == "" {
			reason, message = old.Reason, old.Message
		}
		gen = old.ObservedGeneration
	}
	c := &corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
		Reason: reason, Message: message, ObservedGeneration: gen}
	return c, old == nil || old.Reason != reason || old.Message != message
}

// setResizeInProgress records the pod's PodResizeInProgress condition (nextResizeInProgress) and
// returns the generation it carries and whether it changed.
func (k *Kubelet) setResizeInProgress(uid types.UID, reason, message string, gen int64) (int64, bool) {
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	c, changed := nextResizeInProgress(k.resizeInProgress[uid], reason, message, gen)
	k.resizeInProgress[uid] = c
	return c.ObservedGeneration, changed
}

// clearResizeInProgress drops the pod's PodResizeInProgress condition and returns the
// generation it carried, and whether there was one.
func (k *Kubelet) clearResizeInProgress(uid types.UID) (int64, bool) {
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	c, ok := k.resizeInProgress[uid]
	if !ok {
		return 0, false
	}
	delete(k.resizeInProgress, uid)
	return c.ObservedGeneration, true
}

// trackResizeProgress is SyncPod's resize bookkeeping (upstream kubelet.go SyncPod): while a
// running container of the allocated pod does not have its resources in the runtime, the pod
// shows PodResizeInProgress; once every one has, the condition goes with a ResizeCompleted Event
// carrying the generation of the resize.
func (k *Kubelet) trackResizeProgress(pod *corev1.Pod, rs *kubecontainer.PodStatus) {
	if kuberuntime.ResizeInProgress(pod, rs) {
		k.setResizeInProgress(pod.UID, "", "", pod.Generation)
		return
	}
	if gen, cleared := k.clearResizeInProgress(pod.UID); cleared {
		k.recorder.Eventf(pod, corev1.EventTypeNormal, eventResizeCompleted, "%s",
			resizeEventMessage(pod, gen, "Pod resize completed", ""))
	}
}

// resizeFailed shows a failed in-place update as PodResizeInProgress reason Error with the
// runtime's message, and sends a ResizeError Event when that changed the condition (upstream
// kubelet.go SyncPod after the runtime's ResizePodInPlace result).
func (k *Kubelet) resizeFailed(pod *corev1.Pod, message string) {
	if gen, changed := k.setResizeInProgress(pod.UID, corev1.PodReasonError, message, pod.Generation); changed {
		k.recorder.Eventf(pod, corev1.EventTypeWarning, eventResizeError, "%s",
			resizeEventMessage(pod, gen, "Pod resize error", message))
	}
}

package kubelet

// What the status says of resources and resizes (upstream: kubelet_pods.go
// convertToAPIContainerStatuses' Resources and AllocatedResources; status_manager.go
// GetPodResizeConditions).

import (
	corev1 "k8s.io/api/core/v1"
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

// resizeConditions are the pod's resize conditions: PodResizePending when a resize waits
// (pending), PodResizeInProgress while the runtime has not yet applied what was allocated to a
// running container. Neither once the resize is done. Pure.
func resizeConditions(pod *corev1.Pod, rs *kubecontainer.PodStatus, pending *corev1.PodCondition) []corev1.PodCondition {
	var out []corev1.PodCondition
	if pending != nil {
		out = append(out, *pending)
	}
	if kuberuntime.ResizeInProgress(pod, rs) {
		out = append(out, corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
			ObservedGeneration: pod.Generation})
	}
	return out
}

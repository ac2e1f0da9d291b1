package qos

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/cm"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/podsource"
)

// The oom_score_adj values of upstream's policy.go.
const (
	guaranteedOOMScoreAdj = -997
	besteffortOOMScoreAdj = 1000
)

// Priorities of upstream's pkg/apis/scheduling: pods at or above systemCriticalPriority are
// critical; systemNodeCritical is the priority class of the node's own critical pods.
const (
	systemCriticalPriority = 2 * 1000000000
	systemNodeCritical     = "system-node-critical"
)

// ContainerOOMScoreAdjust is the oom_score_adj of container c of pod on a node with
// memoryCapacity bytes (upstream GetContainerOOMScoreAdjust): how willing the kernel should be
// to kill it when the node runs out of memory. Pure.
func ContainerOOMScoreAdjust(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64) int {
	if isNodeCriticalPod(pod) {
		return guaranteedOOMScoreAdj
	}
	switch GetPodQOS(pod) {
	case corev1.PodQOSGuaranteed:
		return guaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	if memoryCapacity <= 0 {
		memoryCapacity = 1 // no capacity known: any request counts as the whole node
	}
	// Burstable: a container that requests 10 % of the node's memory gets 900; one using more
	// than it asked for then scores above 1000 and goes first. With a pod-level memory request,
	// what the containers do not request themselves is shared out equally among them.
	var extra int64
	if podLevelMemoryRequest(pod) > 0 {
		extra = remainingPodMemoryPerContainer(pod)
	}
	adj := 1000 - 1000*(memoryRequest(c)+extra)/memoryCapacity
	// A sidecar is killed no later than the regular container with the smallest request.
	if isSidecarContainer(pod, c) {
		if min := 1000 - 1000*(minRegularMemoryRequest(pod)+extra)/memoryCapacity; adj > min {
			adj = min
		}
	}
	// Above a Guaranteed container that uses all the memory (score 10 - 997 = 3)…
	if adj < 1000+guaranteedOOMScoreAdj {
		return 1000 + guaranteedOOMScoreAdj
	}
	// …and below BestEffort.
	if adj == besteffortOOMScoreAdj {
		return int(adj - 1)
	}
	return int(adj)
}

// IsCriticalPod: a static pod, a mirror pod, or a pod of a system-critical priority (2000000000
// or more) — what eviction never evicts and admits under pressure (upstream kubelet/types
// IsCriticalPod).
func IsCriticalPod(pod *corev1.Pod) bool {
	_, mirror := pod.Annotations[podsource.ConfigMirrorAnnotationKey]
	return kubecontainer.IsStaticPod(pod) || mirror ||
		(pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority)
}

// isNodeCriticalPod: a critical pod whose priority class is system-node-critical (upstream
// kubelet/types IsNodeCriticalPod).
func isNodeCriticalPod(pod *corev1.Pod) bool {
	return IsCriticalPod(pod) && pod.Spec.PriorityClassName == systemNodeCritical
}

// isSidecarContainer tells whether c is a sidecar: one of pod's init containers, and restartable
// (upstream isSidecarContainer; a regular container may have restartPolicy Always too).
func isSidecarContainer(pod *corev1.Pod, c *corev1.Container) bool {
	if !kubecontainer.IsRestartableInitContainer(c) {
		return false
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return true
		}
	}
	return false
}

// minRegularMemoryRequest is the smallest memory request of the pod's regular containers.
func minRegularMemoryRequest(pod *corev1.Pod) int64 {
	if len(pod.Spec.Containers) == 0 {
		return 0
	}
	least := memoryRequest(&pod.Spec.Containers[0])
	for i := range pod.Spec.Containers[1:] {
		least = min(least, memoryRequest(&pod.Spec.Containers[i+1]))
	}
	return least
}

func podLevelMemoryRequest(pod *corev1.Pod) int64 {
	if pod.Spec.Resources == nil {
		return 0
	}
	return pod.Spec.Resources.Requests.Memory().Value()
}

// remainingPodMemoryPerContainer is the pod-level memory request less what the containers
// request (sidecar rules), shared equally among all containers and init containers.
func remainingPodMemoryPerContainer(pod *corev1.Pod) int64 {
	aggregate := cm.AggregateContainerRequests(pod)
	remaining := podLevelMemoryRequest(pod) - aggregate.Memory().Value()
	return remaining / int64(len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
}

package cm

// What a pod asks of the node (upstream: staging/src/k8s.io/component-helpers/resource/
// helpers.go PodRequests and AggregateContainerRequests; the formula is KEP-753's, sidecars).

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// PodRequests is the pod's effective request of each resource: what its containers need at the
// most demanding moment of its life (AggregateContainerRequests), replaced by the pod-level
// request (spec.resources.requests) for cpu, memory and hugepages where one is set, plus the
// runtime class's overhead (spec.overhead). The scheduler and the kubelet's admission both count
// this. Pure: the pod is not changed, the list is new.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	reqs := AggregateContainerRequests(pod)
	if pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Requests {
			if IsPodLevelResource(name) {
				reqs[name] = q.DeepCopy()
			}
		}
	}
	addResources(reqs, pod.Spec.Overhead)
	return reqs
}

// AggregateContainerRequests is the most the pod's containers request at once, per resource:
//
//	regular containers and sidecars all run together:  sum(containers) + sum(sidecars)
//	init container i runs beside the sidecars before it:  requests(i) + sum(sidecars before i)
//	the pod needs the larger of the two, for each resource
//
// where a sidecar is an init container with restartPolicy Always. Ephemeral containers have no
// resources. Pure.
func AggregateContainerRequests(pod *corev1.Pod) corev1.ResourceList {
	return aggregateContainers(pod, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests })
}

// AggregateContainerLimits is the same formula over the containers' limits: the most the pod
// may use at once of a resource every container limits (upstream PodLimits without pod-level
// limits and overhead; the eviction manager's limit of a pod's ephemeral storage). Pure.
func AggregateContainerLimits(pod *corev1.Pod) corev1.ResourceList {
	return aggregateContainers(pod, func(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Limits })
}

func aggregateContainers(pod *corev1.Pod, of func(*corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	reqs := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addResources(reqs, of(&pod.Spec.Containers[i].Resources))
	}
	sidecars := corev1.ResourceList{} // the sidecars started so far
	initPeak := corev1.ResourceList{} // the most any init container's moment needs
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		moment := corev1.ResourceList{}
		if kubecontainer.IsRestartableInitContainer(c) {
			addResources(reqs, of(&c.Resources)) // it keeps running beside the app
			addResources(sidecars, of(&c.Resources))
			addResources(moment, sidecars)
		} else {
			addResources(moment, of(&c.Resources))
			addResources(moment, sidecars)
		}
		maxResources(initPeak, moment)
	}
	maxResources(reqs, initPeak)
	return reqs
}

// IsPodLevelResourcesSet tells whether spec.resources requests or limits a resource it may set
// (upstream IsPodLevelResourcesSet).
func IsPodLevelResourcesSet(pod *corev1.Pod) bool {
	if pod.Spec.Resources == nil {
		return false
	}
	for _, list := range []corev1.ResourceList{pod.Spec.Resources.Requests, pod.Spec.Resources.Limits} {
		for name := range list {
			if IsPodLevelResource(name) {
				return true
			}
		}
	}
	return false
}

// IsPodLevelResource: the resources spec.resources may set (cpu, memory, hugepages-<size>).
func IsPodLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// addResources adds each quantity of add to sum.
func addResources(sum, add corev1.ResourceList) {
	for name, q := range add {
		total := q.DeepCopy()
		if prev, ok := sum[name]; ok {
			total.Add(prev)
		}
		sum[name] = total
	}
}

// maxResources raises each quantity of list to the one in other, where that is larger.
func maxResources(list, other corev1.ResourceList) {
	for name, q := range other {
		if prev, ok := list[name]; !ok || q.Cmp(prev) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}

// PodMemoryLimit is the pod's memory limit as its cgroup gets it (upstream ResourceConfigForPod's
// memory): the pod-level limit if spec.resources sets one, else — only when every container and
// init container limits its memory — AggregateContainerLimits' memory plus the overhead's. False
// when the pod has no memory limit. Pure.
func PodMemoryLimit(pod *corev1.Pod) (int64, bool) {
	if pod.Spec.Resources != nil {
		if l, ok := pod.Spec.Resources.Limits[corev1.ResourceMemory]; ok && !l.IsZero() {
			return l.Value(), true
		}
	}
	all := append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...)
	for _, c := range all {
		if c.Resources.Limits.Memory().IsZero() {
			return 0, false
		}
	}
	limit := AggregateContainerLimits(pod)[corev1.ResourceMemory]
	return limit.Value() + pod.Spec.Overhead.Memory().Value(), true
}

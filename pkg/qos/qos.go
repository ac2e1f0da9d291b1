package qos

import (
	corev1 "k8s.io/api/core/v1"
)

// qosResources are the resources the QoS class is computed from.
var qosResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// GetPodQOS is the pod's QoS class: status.qosClass as the API server set it, else computed
// from the spec (ComputePodQOS). Pure.
func GetPodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return ComputePodQOS(pod)
}

// ComputePodQOS computes the QoS class from the pod's resources (upstream ComputePodQOS): with
// spec.resources set (pod-level resources) from it alone — even when it is empty, as upstream —
// else from every container and init container. Only positive cpu and memory quantities count.
// Pure.
func ComputePodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	if pod.Spec.Resources != nil {
		addPositive(requests, pod.Spec.Resources.Requests)
		if len(pod.Spec.Resources.Limits) > 0 {
			addPositive(limits, pod.Spec.Resources.Limits)
			guaranteed = limitsBoth(pod.Spec.Resources.Limits)
		}
	} else {
		containers := append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...)
		for _, c := range containers {
			addPositive(requests, c.Resources.Requests)
			addPositive(limits, c.Resources.Limits)
			if !limitsBoth(c.Resources.Limits) {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// addPositive adds the positive cpu and memory quantities of from to sum.
func addPositive(sum, from corev1.ResourceList) {
	for _, name := range qosResources {
		q, ok := from[name]
		if !ok || q.Sign() <= 0 {
			continue
		}
		total := q.DeepCopy()
		if prev, ok := sum[name]; ok {
			total.Add(prev)
		}
		sum[name] = total
	}
}

// limitsBoth tells whether limits sets a positive cpu and a positive memory limit.
func limitsBoth(limits corev1.ResourceList) bool {
	for _, name := range qosResources {
		if q, ok := limits[name]; !ok || q.Sign() <= 0 {
			return false
		}
	}
	return true
}

// memoryRequest is c's memory request in bytes (0 when unset).
func memoryRequest(c *corev1.Container) int64 {
	q, ok := c.Resources.Requests[corev1.ResourceMemory]
	if !ok {
		return 0
	}
	return q.Value()
}

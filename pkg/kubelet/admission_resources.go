package kubelet

// Admission by resources: does the pod fit in what the node's allocatable leaves after the
// other active pods' requests? (upstream: pkg/kubelet/lifecycle/predicate.go generalFilter and
// InsufficientResourceError, removeMissingExtendedResources; pkg/scheduler/eventhandlers.go
// AdmissionCheck; pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest).

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// Reasons of a pod that does not fit (upstream lifecycle package); other resources are
// "OutOf<name>".
const (
	reasonOutOfPods   = "OutOfpods"
	reasonOutOfCPU    = "OutOfcpu"
	reasonOutOfMemory = "OutOfmemory"
	reasonOutOfPrefix = "OutOf"
)

// admitResources fits pod beside others (the active pods) in allocatable, in upstream's order,
// and rejects it for the first resource that does not fit:
//
//  1. pods: one more than the others must not exceed allocatable pods (maxPods);
//  2. cpu (millicores), memory, ephemeral-storage (bytes), then hugepages, extended and other
//     scalar resources by name: the pod's effective request (cm.PodRequests: init containers,
//     sidecars, pod-level requests, overhead), when not zero, must not exceed allocatable less
//     what the others request. An extended resource the node does not have is not checked
//     (cluster-level resources, as upstream); a hugepage size it does not have has 0.
//
// The message is upstream's InsufficientResourceError: "Node didn't have enough resource: cpu,
// requested: 5000, used: 100, capacity: 1900". Pure.
func admitResources(pod *corev1.Pod, others []*corev1.Pod, allocatable corev1.ResourceList) admission {
	if allowed := allocatable.Pods().Value(); int64(len(others))+1 > allowed {
		return insufficient(corev1.ResourcePods, 1, int64(len(others)), allowed)
	}
	requested := cm.PodRequests(pod)
	used := map[corev1.ResourceName]int64{}
	for _, other := range others {
		for name, q := range cm.PodRequests(other) {
			used[name] += amount(name, q)
		}
	}
	for _, name := range fitOrder(requested) {
		if isExtendedResource(name) {
			if _, ok := allocatable[name]; !ok {
				continue
			}
		}
		want, capacity := amount(name, requested[name]), amount(name, allocatable[name])
		if want > 0 && want > capacity-used[name] {
			return insufficient(name, want, used[name], capacity)
		}
	}
	return admitted
}

// insufficient is the rejection for one resource, with upstream's reason and message.
func insufficient(name corev1.ResourceName, requested, used, capacity int64) admission {
	reason := reasonOutOfPrefix + string(name)
	switch name {
	case corev1.ResourcePods:
		reason = reasonOutOfPods
	case corev1.ResourceCPU:
		reason = reasonOutOfCPU
	case corev1.ResourceMemory:
		reason = reasonOutOfMemory
	}
	return admission{reason: reason, message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		name, requested, used, capacity)}
}

// fitOrder lists the requested resources the scheduler's fit counts, in upstream's order: cpu,
// memory, ephemeral-storage, then the scalar ones (hugepages, extended, kubernetes.io/-prefixed,
// attachable volumes) sorted by name; other names are not counted.
func fitOrder(requested corev1.ResourceList) []corev1.ResourceName {
	var order, scalar []corev1.ResourceName
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if _, ok := requested[name]; ok {
			order = append(order, name)
		}
	}
	for name := range requested {
		if strings.Contains(string(name), "/") || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
			strings.HasPrefix(string(name), "attachable-volumes-") {
			scalar = append(scalar, name)
		}
	}
	sort.Slice(scalar, func(i, j int) bool { return scalar[i] < scalar[j] })
	return append(order, scalar...)
}

// isExtendedResource: a resource outside kubernetes.io, like example.com/gpu (upstream
// IsExtendedResourceName).
func isExtendedResource(name corev1.ResourceName) bool {
	n := string(name)
	return strings.Contains(n, "/") && !strings.HasPrefix(n, "kubernetes.io/") && !strings.HasPrefix(n, corev1.DefaultResourceRequestsPrefix)
}

// amount is a quantity in the unit the fit counts: millicores for cpu, whole units (bytes) for
// the rest.
func amount(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Package qos says how much a pod is protected: its QoS class (Guaranteed, Burstable,
// BestEffort), and from it the oom_score_adj of its containers. Pure functions, no state.
//
// Upstream counterparts (v1.36): pkg/apis/core/v1/helper/qos/qos.go (GetPodQOS, ComputePodQOS)
// and pkg/kubelet/qos/policy.go, helpers.go (GetContainerOOMScoreAdjust); the critical-pod
// tests of pkg/kubelet/types/pod_update.go (IsCriticalPod, IsNodeCriticalPod).
//
// The class, from the cpu and memory requests and limits of all containers (init containers
// included, ephemeral ones not), or from spec.resources when the pod sets pod-level resources:
//
//	no request and no limit anywhere               → BestEffort
//	every container limits cpu and memory, and the
//	summed requests equal the summed limits        → Guaranteed
//	anything else                                  → Burstable
//
// The API server stores the class in status.qosClass at creation and never changes it;
// GetPodQOS returns that when it is set (a static pod has no API status, so its class is
// computed). The kubelet needs the class for the pod's cgroup (pkg/cm PodCgroupParent) and for
// each container's oom_score_adj:
//
//	node-critical pod (static or mirror pod, or priority ≥ 2000000000, named system-node-critical) → -997
//	Guaranteed → -997     BestEffort → 1000
//	Burstable  → 1000 - 1000 × memory request / memory capacity, kept within 3 … 999; a sidecar
//	             gets no more than the regular container with the smallest request
//
// Simplified: none; the PodLevelResources feature (beta, on by default in v1.36) is assumed on.
package qos

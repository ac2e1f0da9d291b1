// Package cm holds the container manager's arithmetic: what a pod requests, what the node keeps
// back from pods (node allocatable), and how cpu and a pod's QoS class read in cgroup terms. The
// kubelet's admission, the node status and kuberuntime call it; housekeeping calls
// RemoveOrphanedPodCgroups. It keeps no state, and only those two functions (and
// IsCgroup2UnifiedMode) touch the filesystem.
//
// Upstream counterparts (v1.36), file by file:
//
//   - requests.go: PodRequests, AggregateContainerRequests, AggregateContainerLimits
//     (staging/src/k8s.io/component-helpers/resource/helpers.go; a module minikubelet does not
//     depend on, so the formula is written again here);
//   - allocatable.go: ParseReserved, ParseEvictionHard, ThresholdValue.Amount,
//     IsEvictionSignal, NodeAllocatableReservation, ValidateNodeAllocatable
//     (pkg/kubelet/cm/node_container_manager_linux.go, pkg/kubelet/cm/helpers.go
//     hardEvictionReservation, cmd/kubelet/app/server.go parseResourceList,
//     pkg/kubelet/eviction/helpers.go parseThresholdStatement, pkg/kubelet/eviction/api/types.go
//     GetThresholdQuantity, pkg/kubelet/eviction/defaults_linux.go);
//   - cgroups.go: MilliCPUToShares, MilliCPUToQuota, PodCgroupParent
//     (pkg/kubelet/cm/helpers_linux.go, pod_container_manager_linux.go GetPodContainerName,
//     qos_container_manager_linux.go);
//   - cleanup.go: RemoveOrphanedPodCgroups (pkg/kubelet/kubelet_pods.go
//     cleanupOrphanedPodCgroups, pod_container_manager_linux.go GetAllPodsFromCgroups, Destroy).
//
// Node allocatable, per resource the node has a capacity of:
//
//	allocatable = capacity − kubeReserved − systemReserved − hard eviction threshold   (≥ 0)
//
// where only memory.available (memory) and nodefs.available (ephemeral-storage) thresholds
// reserve anything; evictionHard defaults to memory.available<100Mi, nodefs.available<10%,
// nodefs.inodesFree<5%, imagefs.available<15%, imagefs.inodesFree<5% (pkg/options).
//
// The cgroup tree, with the cgroupfs driver (the only one minikubelet has):
//
//	/kubepods/pod<uid>/<container>              Guaranteed
//	/kubepods/burstable/pod<uid>/<container>    Burstable
//	/kubepods/besteffort/pod<uid>/<container>   BestEffort
//
// Housekeeping removes the pod<uid> cgroups of pods that are gone (with a real runtime only):
// runc removes a container's cgroup, not its parents. Only empty cgroups can be removed, so a
// pod that still has a process keeps its cgroup until a later turn.
//
// Simplified: the kubelet creates none of these cgroups: the runtime's runc creates the
// directories when it starts a pod's first container, and only the containers' own cgroups get
// limits (cpu shares and quota, memory, from kuberuntime). Upstream's container manager also
// creates the pod cgroup first with the pod's summed limits, gives the QoS cgroups their shares,
// enforces node allocatable on /kubepods (enforceNodeAllocatable) and kills what is left in a
// gone pod's cgroup; minikubelet does none of that, nor the systemd driver, cgroupRoot or
// cgroupsPerQOS false, cpu/memory/topology managers, hugepages, or pod-level resources in the pod
// cgroup. Two kubelets with real runtimes on one host would remove each other's empty pod
// cgroups (runc makes them again), as upstream's would.
package cm

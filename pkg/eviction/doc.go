// Package eviction is the kubelet's eviction manager: it watches what is left of the node's
// memory, disk and PIDs, reports the MemoryPressure, DiskPressure and PIDPressure conditions,
// evicts pods (one per pass) when a threshold is crossed, evicts pods over their own local
// storage limits, and refuses new pods under pressure.
//
// Upstream counterparts (v1.36), file by file:
//
//   - types.go: signals, thresholds, the SummaryProvider and KillPodFunc contracts
//     (pkg/kubelet/eviction/types.go, pkg/kubelet/eviction/api/types.go);
//   - config.go: ParseThresholds (pkg/kubelet/eviction/helpers.go ParseThresholdConfig,
//     parseGracePeriods, parseMinimumReclaims; the statements are parsed by pkg/cm, as for node
//     allocatable);
//   - signals.go: from a Summary to the thresholds that act (helpers.go makeSignalObservations,
//     thresholdsMet, thresholdsFirstObservedAt, thresholdsMetGracePeriod, nodeConditions,
//     nodeConditionsLastObservedAt, nodeConditionsObservedSince, thresholdsUpdatedStats,
//     byEvictionPriority);
//   - rank.go: which pod goes first, and the message (helpers.go rankMemoryPressure,
//     rankDiskPressureFunc, rankPIDPressure, evictionMessage);
//   - localstorage.go: emptyDir sizeLimit and ephemeral-storage limits (eviction_manager.go
//     localStorageEviction and its three checks);
//   - manager.go: the loop, evictPod, waitForPodsCleanup, Admit and the conditions
//     (eviction_manager.go).
//
// # One pass (synchronize), every 10 s
//
//	Summary (pkg/stats) ──▶ observations: memory.available, nodefs.available, nodefs.inodesFree,
//	                        imagefs.available, imagefs.inodesFree, pid.available
//	thresholds met now (+ those met before that have not reclaimed evictionMinimumReclaim)
//	  ├─▶ node conditions: a condition is True while its threshold is met and for
//	  │   evictionPressureTransitionPeriod (5 min) after → pkg/nodestatus reports them, and the
//	  │   controller-manager taints the node (node.kubernetes.io/memory-pressure, …)
//	  └─▶ past their grace period (hard: at once; soft: evictionSoftGracePeriod), with stats
//	      newer than the last pass's
//	pods over their own local storage limits → evicted (all of them), pass over
//	else the first threshold (memory first) → Warning Event EvictionThresholdMet on the node
//	  → active pods ranked for its resource → the first non-critical pod evicted:
//	    Warning Event Evicted, KillPod(grace, status Failed/Evicted + DisruptionTarget)
//	after an eviction: wait (≤ 30 s) until the pod is cleaned up, then the next pass at once
//
// Ranking: memory — usage above requests first, then lower priority, then usage above the
// request; disk — the same with local storage (bytes or inodes); PIDs — lower priority, then
// more processes. A pod without stats goes first. Grace period: 1 s for a hard threshold and a
// storage limit; for a soft threshold min(evictionMaxPodGracePeriod, the pod's
// terminationGracePeriodSeconds).
//
// Admission (Admit): no pressure, or a critical pod (static, mirror, priority ≥ 2000000000):
// admitted. MemoryPressure alone: only BestEffort pods that do not tolerate the memory-pressure
// taint are refused. Any other pressure: every pod is refused. Reason Evicted, message "The node
// had condition: [DiskPressure]. ".
//
// # Invariants
//
//   - At most one pod per pass is evicted for a threshold; critical pods never are.
//   - The conditions only change in synchronize; IsUnder and Admit read them under a lock.
//   - Everything but Run, synchronize's I/O (Summary, KillPod, Events) and the lock is a pure
//     function, tested with synthetic Summaries.
//
// Simplified:
//   - No memcg threshold notifier (kernelMemcgNotification): memory is polled every 10 s.
//   - No node-level reclaim before evicting: no image or container garbage collection on disk
//     pressure; pods are evicted at once.
//   - One filesystem assumed: nodefs and imagefs are observed separately, but every disk signal
//     ranks pods by all their local storage (writable layers, logs, local volumes), as upstream
//     without a dedicated imagefs. containerfs.* and allocatableMemory.available thresholds are
//     accepted and never observed (upstream derives them from nodefs/imagefs and from
//     enforceNodeAllocatable=pods).
//   - The Evicted Event carries no annotations (offending_containers, …).
//   - KillPod does not block until the pod is killed; the wait is waitForPodsCleanup's.
package eviction

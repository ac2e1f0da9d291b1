// Package pleg is the Pod Lifecycle Event Generator: it turns polling of the container runtime
// into events, so the kubelet syncs only the pods whose containers changed, and it fills the pod
// cache that pod workers read instead of asking the runtime themselves.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//   - pkg/kubelet/pleg/generic.go: GenericPLEG, Relist, Healthy (generic.go), and
//     generateEvents (events.go: computeEvents, from the states of two relists);
//   - pkg/kubelet/pleg/pleg.go: PodLifecycleEvent and its types (pleg.go);
//   - pkg/kubelet/container/cache.go: the pod cache with its blocking GetNewerThan (cache.go).
//
// # The relist loop
//
// Run calls Relist at once, then every RelistPeriod (1 s) on the injected clock's ticker, and
// also whenever RelistSoon asks: a pod worker whose sync started or stopped something calls it,
// so the change reaches the pod's status in milliseconds, not at the next tick. Requests made
// while one is pending coalesce into one relist. One Relist is:
//
//	timestamp := now                         ← before asking the runtime
//	GetPods(all=true) ──error──▶ log, return (Healthy starts counting)
//	     │ ok: lastRelist = timestamp
//	     ▼
//	for each pod in (last records ∪ listed now), by UID:
//	    old states  ─┐  per container and sandbox ID:
//	    new states  ─┴▶ computeEvents(pod, id, old, new)      ← pure, table-tested
//	    no events ──▶ next pod
//	    pod gone  ──▶ cache.Delete(uid), forget its record
//	    otherwise ──▶ GetPodStatus ─▶ cache.Set(uid, status, err, timestamp)
//	                  error ──▶ keep the old record (same events next relist), send nothing
//	    send events (not ContainerChanged) without blocking; a full channel drops them
//	cache.UpdateTime(timestamp)              ← only after all changed pods are cached
//
// Container states are CRI's folded into running, exited and unknown (CREATED and UNKNOWN), plus
// non-existent for an ID not listed. A sandbox is compared as a container keyed by its ID
// (READY = running, NOTREADY = exited), so a sandbox that dies yields ContainerDied with the
// sandbox ID. computeEvents:
//
//	old state        new state        events
//	(any other)      running          ContainerStarted
//	(any other)      exited           ContainerDied
//	(any other)      unknown          ContainerChanged (cache refreshed, not sent)
//	exited           non-existent     ContainerRemoved
//	running/unknown  non-existent     ContainerDied, ContainerRemoved
//	same             same             none
//
// # Invariants
//
//   - Every cache entry is stamped with the start of the relist that read it, and the cache's
//     global timestamp moves to that start only after all changed pods are written: a worker
//     blocked in GetNewerThan(t) is released by either, and never sees a status older than t.
//   - Healthy is false when the last successful relist started more than RelistThreshold (3 min)
//     ago, or, before any success, when New ran more than RelistThreshold ago.
//   - A container created, exited and removed within one RelistPeriod is missed entirely, as
//     upstream; the kubelet's periodic sync is the safety net.
//
// # Simplified
//
// No evented PLEG (CRI GetContainerEvents) yet: RelistSoon gives the same quick reaction to the
// kubelet's own changes, with the relist still the only source of truth. No reinspection queue
// and no relist of one pod (a pod whose status could not be read simply keeps its old record, so
// its events come again on the next relist); no PodSync event; no preserving of the pod IP
// across a teardown; no metrics beyond the Config.OnRelist hook.
package pleg

// Package pleg is the Pod Lifecycle Event Generator: it turns polling of the container runtime
// into events, so the kubelet syncs only the pods whose containers changed, and it fills the pod
// cache that pod workers read instead of asking the runtime themselves.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//   - pkg/kubelet/pleg/generic.go: GenericPLEG, Relist, Healthy, Update (generic.go), and
//     generateEvents (events.go: computeEvents, from the states of two relists);
//   - pkg/kubelet/pleg/evented.go: EventedPLEG (evented.go), the feature gate EventedPLEG
//     (KEP-3386, alpha, off by default), with kubelet.go's relist durations for it;
//   - pkg/kubelet/pleg/pleg.go: PodLifecycleEvent and its types (pleg.go);
//   - pkg/kubelet/container/cache.go: the pod cache with its blocking GetNewerThan (cache.go).
//
// # The relist loop
//
// Run calls Relist at once, then every RelistPeriod (1 s) on the injected clock's ticker (Update
// changes the period, and relists at once), and also whenever RelistSoon asks: a pod worker whose sync started or stopped something calls it,
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
// # The evented PLEG (feature gate EventedPLEG)
//
// EventedPLEG wraps a GenericPLEG: same cache, same channel. Its Run runs the relist loop and a
// stream loop beside it; one turn of the stream loop is watchOnce:
//
//	GetContainerEvents (CRI, server streaming) ──error──▶ fallBack
//	     │ open; the relist still runs every 1 s ("starting")
//	     ├── open for one fallback period (1 s) ──▶ useStream: Update(5 min, threshold 10 min),
//	     │        which relists once at once (covers what changed before the stream opened);
//	     │        RelistSoon becomes a no-op; every 5 s cache.UpdateTime(now)
//	     ├── each event ──▶ processEvent:
//	     │        timestamp := now; GetPodStatus(pod of the event's sandbox metadata)
//	     │        nothing left of the pod ──▶ cache.Delete
//	     │        else cache.Set(uid, status, timestamp) ── a newer entry is kept ──▶ send nothing
//	     │        eventsOf (pure): STARTED→ContainerStarted, STOPPED→ContainerDied,
//	     │                         DELETED→ContainerDied+ContainerRemoved, CREATED→none
//	     └── Recv error (broken, Unimplemented on containerd 1.6) ──▶ fallBack:
//	              Update(1 s, 3 min), said once in the log and the journal ("stream down");
//	              wait 1 s, 2 s, 4 s … 2 min (reset after a trusted stream), open it again
//
// Healthy is the generic PLEG's, with the threshold of the mode, and false when the event
// channel is full.
//
// # Invariants
//
//   - Every cache entry is stamped with the start of the relist that read it, and the cache's
//     global timestamp moves to that start only after all changed pods are written: a worker
//     blocked in GetNewerThan(t) is released by either, and never sees a status older than t.
//   - Healthy is false when the last successful relist started more than RelistThreshold (3 min)
//     ago, or, before any success, when New ran more than RelistThreshold ago.
//   - A container created, exited and removed within one RelistPeriod is missed entirely, as
//     upstream; the kubelet's periodic sync is the safety net. With a trusted event stream it is
//     seen as it happens.
//   - Cache timestamps only move forward, whichever of the relist and the stream writes: an
//     entry is never replaced by one read earlier, and the global timestamp never goes back.
//
// # Simplified
//
// The generic PLEG: RelistSoon gives the quick reaction to the kubelet's own changes that
// upstream gets from the evented PLEG. No reinspection queue and no relist of one pod (a pod whose
// status could not be read simply keeps its old record, so its events come again on the next
// relist); no PodSync event; no preserving of the pod IP across a teardown; no metrics beyond the
// Config.OnRelist hook.
//
// The evented PLEG: an event's pod status is read again with GetPodStatus (stamped with the time
// before that read) instead of converted from the statuses the event carries (upstream
// GeneratePodStatus, stamped with the event's createdAt): the conversion is kuberuntime's, and
// one read more per event buys one code path for both. Upstream trusts the stream from the start
// and, after 5 failed attempts, relists every second for good; ours trusts a stream once it has
// stayed open for a second, and keeps retrying with back-off. No evented PLEG metrics
// (evented_pleg_connection_*), no running pod/container gauges from events.
package pleg

// Package podworkers runs one goroutine per pod: the only place a pod's containers are started or
// stopped, so that two syncs of one pod never race.
//
// Upstream counterpart: pkg/kubelet/pod_workers.go (podWorkers, UpdatePod, podWorkerLoop,
// SyncKnownPods, completeTerminatingRuntimePod) — whose long type comment this package's diagram
// follows.
//
// A pod moves one way through four states:
//
//	          UpdatePod(create/update/sync)
//	               ┌──────┐
//	               ▼      │ SyncPod (start what should run)
//	(new) ──▶  syncing ───┘
//	               │  kill / deletionTimestamp / terminal phase / not desired any more
//	               ▼
//	         terminating ── SyncTerminatingPod(grace) ──▶ stop every container
//	               │  nothing runs any more
//	               ▼
//	          terminated ── SyncTerminatedPod ──▶ final status, cleanup
//	               │
//	               ▼
//	           finished ── SyncKnownPods (housekeeping), pod no longer desired ──▶ worker removed
//
// Each turn of a worker (syncOnce) takes the pending update — updates that arrive while it works
// coalesce into one — waits for Cache.GetNewerThan(lastSync), so it never acts on a runtime status
// older than its own last sync, and calls the sync function of its state. A failed sync makes the
// pod due again after BackOffPeriod, a successful one
// after ResyncInterval; the syncLoop asks DuePods every second (upstream: the work queue drained
// on syncCh). A failed sync is logged at Error level, as upstream's "Error syncing pod", except a
// sync cut short by cancellation, at V(2). A pod waiting for its volumes waits inside SyncPod
// (the volume manager's WaitForAttachAndMount), not by failing.
//
// A pod known only from the runtime — an orphan housekeeping found running, with no desired pod
// behind it — comes as a SyncPodKill with RunningPod: its worker starts terminating, calls
// SyncTerminatingRuntimePod and is finished, with no status to publish (runtime_pods.go). So
// housekeeping stops no container itself.
//
// New makes the workers; Run lets them run (the kubelet makes them in its pod-lifecycle step and
// runs them in its pod-workers step). An update before Run is kept, and its worker starts with Run.
//
// Invariants: states only move forward; the grace period only shrinks once terminating; UpdatePod
// never blocks; a removed pod leaves no goroutine behind.
// Simplified: no static pod full-name serialisation (a static pod's replacement may start while
// the old one stops), no "terminated before started" fast path, no pod-level resize.
package podworkers

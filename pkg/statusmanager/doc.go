// Package statusmanager is the kubelet's only writer of pods/status: a versioned cache of the API
// pod status the kubelet computed, synced to the API server, and the step that finishes a
// graceful deletion (the DELETE with grace period 0 that lets `kubectl delete pod` return).
//
// Upstream counterpart: pkg/kubelet/status/status_manager.go, one file upstream, three here:
//
//   - manager.go: Config, New, the cache and its setters (manager, SetPodStatus,
//     SetContainerReadiness, TerminatePod, updateStatusInternal);
//   - sync.go: Run and one sync (Start, syncBatch, needsReconcile, syncPod);
//   - status.go: the pure decisions — prepareStatus, statusChanged, mergeStatus,
//     terminatedStatus, needsSync (normalizeStatus, mergePodStatus, needsUpdate) — and statusPatch
//     (pkg/util/pod/pod.go PatchPodStatus, the strategic merge patch it sends).
//
// The loop (Run) repeats syncLoopIteration, one turn at a time on a single goroutine, so two
// syncs never race:
//
//	SetPodStatus / SetContainerReadiness / TerminatePod            ← callers, never block
//	   prepareStatus: keep lastTransitionTime of unchanged conditions, keep startTime,
//	                  truncate times to seconds (as the API stores them)        ← pure
//	   statusChanged? no → nothing (unless the pod is being deleted)            ← pure
//	   yes → version++ → non-blocking send of the pod UID on syncCh (full? the resync catches up)
//	                          │
//	Run: ◀── uid from syncCh ─┤  or every SyncPeriod (10 s): syncAll = every pending entry, and
//	                          │  every entry whose API status (Config.Pods: the kubelet's copy)
//	                          ▼  differs from what it would write (someone else changed it)
//	pending? (version > version written, a new API object, or a deletion to finish)  ← pure
//	   ▼
//	syncPod: target (the pod, or its mirror pod for a static pod; no mirror yet → next resync)
//	   → GET pod ── NotFound, or UID differs (deleted and recreated) → drop the entry
//	   → mergeStatus(API status, cached)  (conditions set by others are kept)          ← pure
//	   → statusChanged? → PATCH pods/<name>/status (strategic merge patch, UID precondition)
//	   → record the version written
//	   → deletionTimestamp set && PodDeletionSafety(pod, status)?
//	        → DELETE grace 0 with a UID precondition → drop the entry
//
// Invariants:
//   - Callers never block: the setters only take a mutex and do a non-blocking channel send; all
//     network I/O happens on the Run goroutine.
//   - Only PATCHes on change: a sync whose merged status equals the API status sends nothing.
//   - Versions only grow: each accepted change is version+1 and the version written only moves
//     forward, so a slow sync never rolls a newer status back to an older one.
//   - Cached statuses are never mutated in place: every change stores a new deep copy, so a copy
//     taken under the lock may be read without it.
//   - Mirror pods are never deleted here (podmanager owns them), as upstream.
//
// Simplified, compared with upstream: no pod-level resize status or resize conditions; no mirror
// pod creation (podmanager does that); no container state transition checks; no readiness gates
// (Ready follows ContainersReady); no delay of a terminal phase while containers may still run;
// TerminatePod marks every not-terminated container status, init containers included; no
// update notifiers or metrics. The setters do not log (they have no context): the loop logs what
// it sends, at V(2) per pod change and V(4) per loop detail.
package statusmanager

// Package statusmanager is the kubelet's only writer of pods/status: a versioned cache of the API
// pod status the kubelet computed, synced to the API server, and the step that finishes a
// graceful deletion (the DELETE with grace period 0 that lets `kubectl delete pod` return).
//
// Upstream counterpart: pkg/kubelet/status/status_manager.go and generate.go, two files
// upstream, four here:
//
//   - manager.go: Config, New, the cache and its setters (manager, SetPodStatus,
//     SetContainerReadiness, updateStatusInternal);
//   - sync.go: Run and one sync (Start, syncBatch, needsReconcile, syncPod);
//   - generate.go: the conditions the kubelet owns (status/generate.go, kubetypes
//     PodConditionByKubelet) and TerminatedStatus;
//   - status.go: the pure decisions — prepareStatus, statusChanged, mergeStatus, needsSync
//     (normalizeStatus, mergePodStatus, needsUpdate) — and statusPatch
//     (pkg/util/pod/pod.go PatchPodStatus, the strategic merge patch it sends).
//
// The loop (Run) repeats syncLoopIteration, one turn at a time on a single goroutine, so two
// syncs never race:
//
//	SetPodStatus / SetContainerReadiness                           ← callers, never block
//	   SetPodStatus: observedGeneration = the pod's generation
//	   prepareStatus: keep lastTransitionTime of unchanged conditions, keep startTime, never
//	                  lower observedGeneration, truncate times to seconds (as the API stores
//	                  them)                                                      ← pure
//	   statusChanged? no → nothing (unless the pod is being deleted)            ← pure
//	   yes → version++ → non-blocking send of the pod UID on syncCh (full? the resync catches up)
//	                          │
//	Run: ◀── uid from syncCh ─┤  or every SyncPeriod (10 s): syncAll = every pending entry, and
//	                          │  every entry whose API status (Config.Pods: the kubelet's copy)
//	                          ▼  differs from what it would write (someone else changed it)
//	pending? (version > version written, a new API object, or a deletion to finish)  ← pure
//	   ▼
//	syncPod: target (the pod, or its mirror pod for a static pod — kubecontainer.IsStaticPod:
//	         config.source set and not "api"; no mirror yet → next resync)
//	   → GET pod ── NotFound, or UID differs (deleted and recreated) → drop the entry
//	             ── Forbidden (the node authorizer's graph lags the kubelet's watch):
//	                judgeForbidden: pod gone from the kubelet → drop; known → retry on the next
//	                resync, quietly, for authorizerLag (15 s); after that an error        ← pure
//	   → mergeStatus(API status, cached): the API's conditions of types the kubelet does not
//	     own (PodConditionByKubelet), then the cached ones of the types it owns        ← pure
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
//   - The kubelet never writes a condition it does not own: a readiness gate's or a controller's
//     condition in the API stays as others set it, even if the cache holds an older copy.
//
// The conditions (generate.go) are upstream status/generate.go's: Initialized, ContainersReady,
// and Ready, which is ContainersReady unless that is True, and then True only if every
// spec.readinessGates condition is True in the status (else ReadinessGatesNotReady). Each
// carries the pod's generation as observedGeneration (PodObservedGenerationTracking, GA and
// locked on since v1.35). NeedToReconcilePodReadiness tells the kubelet that someone changed a
// readiness gate, so that it syncs the pod and Ready follows.
//
// Simplified, compared with upstream: no pod-level resize status (the kubelet computes the
// resize conditions, pkg/kubelet pod_resize_status.go); no mirror
// pod creation (podmanager does that); no container state transition checks; no DisruptionTarget
// of its own (one set by others is kept, as any condition the kubelet does not own); no
// UnknownContainerStatuses reason (a pod without container statuses has them all unknown); no
// delay of a terminal phase while containers may still run; no TerminatePod method: the kubelet
// passes TerminatedStatus (upstream TerminatePod's rewrite of the status, pure here) to
// SetPodStatus once a pod's containers are stopped; no update notifiers or metrics. The setters
// do not log (they have no context): the loop logs what it sends, at V(2) per pod change and
// V(4) per loop detail.
package statusmanager

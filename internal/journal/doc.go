// Package journal is a live view of the syncLoop — "what just happened?": an in-memory ring of
// the latest events of the kubelet's components, served as JSON and as a page that draws one
// timeline per pod. Course labs read it.
//
// Upstream counterpart: none. The real kubelet says the same things in its logs (at -v=2..4)
// and in Events; the journal gathers them, with their order, in one place a student can watch.
//
// Each node agent has one *Journal (kubelet.New makes it). Components write through a Recorder,
// the one way to record: the wiring hands each component the Recorder of its source
// (journal.For(SourcePLEG)) in its Config, and the component calls Record(kind, pod, fields). The
// zero Recorder records nothing, so a component works without a journal and unit tests need none.
//
//	syncLoopIteration ─┐
//	pod workers ───────┤                           ┌─▶ GET /debug/journal  (:10250, nodes/proxy)
//	kuberuntime (CRI) ─┤  Record(Event) ──▶ ring ──┤   GET /debug/journal/ui
//	PLEG ──────────────┤  (one mutex, a slice;     └─▶ the same on --debug-address (loopback, no
//	status manager ────┤   oldest overwritten)         authentication) ◀── minikubelet journal
//	lease, secrets ────┤
//	prober, eviction ──┤
//	volume manager ────┤
//	start order ───────┘
//
// # Sources and kinds (labs depend on these strings)
//
//	source     kind                                   pod  fields
//	syncloop   configCh ADD|UPDATE|DELETE|REMOVE|     yes  source (api, file); one event per pod
//	           RECONCILE                                    of the update
//	syncloop   plegCh                                 yes  event, id (pod "" once the kubelet forgot it)
//	syncloop   syncCh                                 yes  (one per pod due for a resync; a tick
//	                                                        with no pod due is not recorded)
//	syncloop   housekeepingCh                         -    error (every 2 s)
//	syncloop   livenessCh, readinessCh, startupCh     yes  result, id (a probe's result changed)
//	podworker  worker started, syncing, terminating,  yes  updateType, gracePeriod, reason, state
//	           terminated, worker done                      (a state is recorded when entered; worker
//	                                                        done when housekeeping ends the goroutine)
//	cri        RunPodSandbox, CreateContainer,        yes  id, container, duration, error (image)
//	           StartContainer, StopContainer,
//	           StopPodSandbox, RemovePodSandbox,
//	           PullImage
//	pleg       ContainerStarted, ContainerDied,       yes  id (container or sandbox), via (relist, or
//	           ContainerRemoved                             event: seen in the runtime's event stream)
//	pleg       stream up, stream down                 -    relistPeriod, retryIn, error (EventedPLEG:
//	                                                        the event stream trusted, or broken)
//	status     version bump                           yes  version, phase
//	status     PATCH                                  yes  version, phase, code, error
//	status     delete                                 yes  code (the final DELETE of a deleted pod)
//	lease      renew                                  -    latency, error
//	secrets    get, watch, cache hit                  -    kind (secret, configmap), object
//	start      start, stop                            -    step (a step of the start order), took, error
//	probe      liveness, readiness, startup           yes  result, container, output (on a change)
//	eviction   pressure                               -    conditions (the pressure conditions, on a change)
//	eviction   threshold met                          -    signal, threshold, available, gracePeriod (a pass that
//	                                                        must reclaim: one per pass while it lasts)
//	eviction   evict                                  yes  signal, gracePeriod, message
//	eviction   reject                                 yes  conditions (admission refused a pod under pressure)
//	volume     setUp                                  yes  volume, type (configMap, persistentVolumeClaim
//	                                                        → hostPath, …), dir (first set-up only, not
//	                                                        the remount of every pod sync)
//	volume     tearDown                               yes  volume (the pod's containers are gone)
//	volume     removeOrphan                           -    uid, error (housekeeping removed the directory
//	                                                        of a pod that is gone: it knows no name)
//
// A pod is "namespace/name" (PodKey). A kubectl delete shows as configCh DELETE (graceful
// deletion: deletionTimestamp set), later configCh REMOVE (the pod is gone from the API server,
// after the status manager's delete). PLEG has no PodSync event in minikubelet, so the journal
// never shows one.
//
// # Invariants
//
//   - Seq counts from 1 without gaps, in the order Record was called; Time never goes back as
//     Seq grows (both are set under the lock).
//   - Record never blocks on a reader: followers (Wait) sleep on a channel that Record closes.
//   - Memory is bounded: the ring grows (by doubling) up to its size, never past it; Read
//     returns copies of the kept events.
//
// # Reading it
//
//	GET /debug/journal?since=<seq>&pod=<ns/name>&source=<s>&wait=<duration>
//	→ {"oldestSeq": 1, "lastSeq": 42, "events": [{"seq": 40, "time": …, "source": "cri", …}]}
//
// Pass lastSeq as the next since. wait (at most 1 min) holds the request until an event matches:
// a long poll, which `minikubelet journal --follow` uses. lastSeq below your since means the
// kubelet restarted: start again from 0; oldestSeq above since+1 means events were overwritten.
package journal

// Package prober runs the liveness, readiness and startup probes of a pod's containers and keeps
// their results, which the kubelet turns into actions: a liveness or startup Failure kills the
// container (kuberuntime), readiness sets the container's Ready (status manager), startup its
// Started. Each result change arrives on a ResultsManager's Updates channel, one per kind, which
// the syncLoop selects on.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//   - pkg/kubelet/prober/prober_manager.go: the Manager, AddPod, StopLivenessAndStartup, RemovePod,
//     CleanupPods (manager.go) and UpdatePodStatus (podstatus.go);
//   - pkg/kubelet/prober/worker.go: one goroutine per probe (worker.go);
//   - pkg/kubelet/prober/prober.go: one probe, its retries and its Events (prober.go);
//   - pkg/kubelet/prober/results/results_manager.go: Result, Update, the cache (results.go);
//   - pkg/probe/{exec,http,tcp,grpc}: the handlers (exec.go, http.go, tcp.go, grpc.go);
//   - whether an exited container runs again, so its worker stays, is pkg/container's
//     ContainerShouldRestart (upstream pkg/api/v1/pod/util.go), the decision kuberuntime acts on.
//
// # The worker loop
//
// AddPod starts one worker per (container or sidecar, probe kind). Its goroutine:
//
//	kubelet started less than a period ago? → wait rand [0, period)
//	loop: doProbe, then wait for the ticker (periodSeconds), a trigger (UpdatePodStatus: not
//	      ready yet), stop (RemovePod, CleanupPods, StopLivenessAndStartup) or the end of ctx
//
//	doProbe:
//	  no pod status yet ─────────────────────────────▶ again next tick
//	  phase Succeeded/Failed ────────────────────────▶ end the worker
//	  container has no ID yet ───────────────────────▶ again next tick
//	  new container ID ──▶ forget the old result, set the initial value
//	                      (readiness Failure, liveness Success, startup Unknown), resume
//	  on hold ───────────────────────────────────────▶ again (until a new container ID)
//	  not running ──▶ set Failure ──▶ it will restart? again : end the worker
//	  deletionTimestamp and liveness/startup ──▶ set Success ──▶ end the worker
//	  before initialDelaySeconds since StartedAt ────▶ again
//	  startup: container Started? / others: not Started? ──▶ again (not my turn)
//	  probe (timeoutSeconds; an error is retried 3 times, then ignored: no count)
//	  same result failureThreshold / successThreshold times in a row? ──▶ set it
//	  liveness Failure, or startup anything ──▶ on hold
//
// # Wiring (what the kubelet calls)
//
//	SyncPod                 AddPod (every sync: new workers, or the newer pod for existing ones)
//	generateAPIPodStatus    UpdatePodStatus: Started and Ready of each container status
//	SyncTerminatingPod      StopLivenessAndStartup before the kill, RemovePod after it
//	housekeeping            CleanupPods(the desired pods)
//	syncLoopIteration       Liveness.Updates(): Failure → sync the pod (kuberuntime kills the
//	                          container, with the probe's terminationGracePeriodSeconds when
//	                          it sets one: kuberuntime killGracePeriod)
//	                        Readiness.Updates() → the status manager's SetContainerReadiness, sync
//	                        Startup.Updates()   → the container's Started, sync
//
// Events, on the pod with the container's field path (spec.containers{name}): Warning Unhealthy
// "Liveness probe failed: <output>" or "Readiness probe errored and resulted in unknown state:
// <error>", Warning ProbeWarning "Readiness probe warning: <output>" (an HTTP redirect to another
// host). The journal (source "probe") records every change of a result: kind liveness,
// readiness or startup; fields result, container, output (the output of the probe that decided,
// "" for an initial value).
//
// HTTPS probes verify the pod's certificate against the node's trusted CAs: here minikubelet
// differs from upstream on purpose (the real kubelet skips the verification), because this
// project never switches TLS verification off. A pod serving a certificate the node does not
// trust fails its HTTPS probe, with the TLS error as the probe's output.
//
// Readiness keeps being probed while a pod terminates (liveness and startup stop), as upstream
// v1.36: a terminating pod stays Ready until its containers stop.
//
// # Invariants
//
//   - A results manager sends an Update only when a container's value changes, never on Remove.
//   - A new container ID always starts from the initial value (except a container running since
//     before the kubelet started: it keeps its Ready and Started, as v1.36 does by default).
//   - After a liveness Failure or a startup verdict the worker does not probe that container
//     again: kuberuntime kills it, and the next container has a new ID.
//   - Liveness and readiness do not probe a container before Started (its startup probe succeeded,
//     or it has none); startup does not probe it after.
//   - Readiness keeps probing while the pod terminates (deletionTimestamp set), as upstream v1.36
//     (its TestDoProbe "Pod deletion" case): a container that still serves stays Ready until it
//     stops; liveness and startup say Success once and stop.
//   - Every worker goroutine is tracked: Run returns only after all of them have; each forgets
//     its container's result and itself as it ends.
//
// # Simplified
//
// No metrics (prober_probe_total, prober_probe_duration_seconds); a panic in a probe is not
// recovered; AddPod also hands existing workers the newer pod (upstream shares one mutated pod
// object); probes of static pods get the API's defaults here (period 10 s, timeout 1 s,
// thresholds 1 and 3) because minikubelet's file source does not default them; init container
// statuses are matched to the spec by name, not by index. The feature gates are fixed at their
// v1.36 defaults: ChangeContainerStatusOnKubeletRestart off (the kubelet-restart rules are on),
// ContainerRestartRules on. A worker does not wait for RestartAllContainers (upstream's
// AllContainersRestarting): minikubelet's runtime restarts only the container whose rule matched.
package prober

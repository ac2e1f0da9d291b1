package prober

// The worker: one goroutine per (pod, container, probe kind) that probes on a ticker and turns
// runs into results with the thresholds (upstream: pkg/kubelet/prober/worker.go).

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// restartGrace: a container whose running StartedAt is more than this before the Manager was
// made was running before the kubelet (re)started, and keeps its Ready and Started (upstream
// kubeletRestartGracePeriod; the default of v1.36, with ChangeContainerStatusOnKubeletRestart off).
const restartGrace = 10 * time.Second

// worker probes one container with one of its probes. run is its goroutine; the fields below
// "state" belong to it alone.
type worker struct {
	m         *Manager
	kind      Kind
	podUID    types.UID
	container corev1.Container
	spec      corev1.Probe // with the API's defaults for zero fields
	results   *ResultsManager
	sidecar   bool // a restartable init container
	// pod is the latest pod AddPod was given (for its deletionTimestamp).
	pod atomic.Pointer[corev1.Pod]

	stopCh    chan struct{} // buffered: stop never blocks
	triggerCh chan struct{} // buffered: UpdatePodStatus asks for a readiness probe now

	// state
	containerID string // API form of the container probed; "" before the first
	lastResult  Result // of the last run
	resultRun   int    // how many runs in a row gave lastResult
	onHold      bool   // skip probing until the container ID changes
}

func newWorker(m *Manager, kind Kind, pod *corev1.Pod, c corev1.Container) *worker {
	w := &worker{
		m:         m,
		kind:      kind,
		podUID:    pod.UID,
		container: c,
		spec:      withDefaults(*probeSpec(&c, kind)),
		results:   m.resultsFor(kind),
		sidecar:   isInitContainer(pod, c.Name) && kubecontainer.IsRestartableInitContainer(&c),
		stopCh:    make(chan struct{}, 1),
		triggerCh: make(chan struct{}, 1),
	}
	w.pod.Store(pod)
	return w
}

// run probes until the worker is stopped, ctx ends, or doProbe says the container is done for.
func (w *worker) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(w.pod.Load()), "containerName", w.container.Name, "probeType", w.kind)
	ctx = klog.NewContext(ctx, logger)
	defer w.cleanup()
	period := time.Duration(w.spec.PeriodSeconds) * time.Second

	if d := startDelay(period, w.m.cfg.Clock.Since(w.m.start), rand.Float64()); d > 0 {
		jitter := w.m.cfg.Clock.NewTimer(d)
		select {
		case <-jitter.C():
		case <-ctx.Done():
			jitter.Stop()
			return
		case <-w.stopCh:
			jitter.Stop()
			return
		}
	}

	ticker := w.m.cfg.Clock.NewTicker(period)
	defer func() { ticker.Stop() }() // the ticker may be replaced below
	for w.doProbe(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-w.stopCh:
			return
		case <-ticker.C():
		case <-w.triggerCh:
			// A probe now, and the next one a full period after it (upstream resets its ticker).
			ticker.Stop()
			ticker = w.m.cfg.Clock.NewTicker(period)
			logger.V(4).Info("Triggered probe by manual run")
		}
	}
}

// cleanup forgets the container's result and the worker itself.
func (w *worker) cleanup() {
	if w.containerID != "" {
		w.results.Remove(w.containerID)
	}
	w.m.removeWorker(w)
}

// stop asks the worker to end. It never blocks and may be called many times.
func (w *worker) stop() {
	select {
	case w.stopCh <- struct{}{}:
	default:
	}
}

// trigger asks for a probe now. It never blocks; a trigger already pending absorbs it.
func (w *worker) trigger() bool {
	select {
	case w.triggerCh <- struct{}{}:
		return true
	default:
		return false
	}
}

// doProbe is one turn: read the container's status, maybe probe it once, maybe record a result.
// It returns whether the worker should go on.
func (w *worker) doProbe(ctx context.Context) (keepGoing bool) {
	logger := klog.FromContext(ctx)
	pod := w.pod.Load()
	status, ok := w.m.cfg.Status.GetPodStatus(w.podUID)
	if !ok {
		logger.V(3).Info("No status for pod")
		return true // not created yet, or already gone
	}
	if status.Phase == corev1.PodFailed || status.Phase == corev1.PodSucceeded {
		logger.V(3).Info("Pod is terminated, exiting probe worker", "phase", status.Phase)
		return false
	}
	c, ok := findContainerStatus(&status, w.container.Name)
	if !ok {
		logger.V(3).Info("Probe target container not found")
		return true // not created yet, or removed
	}

	if c.ContainerID != w.containerID {
		// A new container (the first, or a restart): forget the old one's result, start from the
		// initial value, resume probing. Not for a container that ran before the kubelet
		// started (restartGrace): it has no result until its first verdict, and UpdatePodStatus
		// keeps its Ready and Started meanwhile; a sidecar among them that had Started gets
		// startup Success at once, so that the pod's main containers may start.
		if w.containerID != "" {
			w.results.Remove(w.containerID)
		}
		w.containerID = c.ContainerID
		if w.sidecar && w.kind == Startup && c.Started != nil && *c.Started {
			w.set(ctx, pod, Success, "")
		}
		if !startedBefore(c, w.m.start.Add(-restartGrace)) {
			w.set(ctx, pod, initialValue(w.kind), "")
		}
		w.onHold = false
	}
	if w.onHold {
		return true // a liveness or startup verdict was given: wait for the next container
	}

	if c.State.Running == nil {
		logger.V(3).Info("Non-running container probed")
		w.set(ctx, pod, Failure, "")
		// Go on only if the container will run again (its restart rules, its restartPolicy, the
		// pod's: the runtime's own decision). Upstream also goes on while all containers restart
		// (RestartAllContainers), which minikubelet's runtime does not do.
		return c.State.Terminated == nil || kubecontainer.ContainerShouldRestart(&w.container, &pod.Spec, c.State.Terminated.ExitCode)
	}

	// Graceful deletion: liveness and startup say Success once and stop, so that the container
	// is not killed again while it terminates. Readiness goes on probing.
	if pod.DeletionTimestamp != nil && (w.kind == Liveness || w.kind == Startup) {
		logger.V(3).Info("Pod deletion requested, setting probe result to success")
		w.set(ctx, pod, Success, "")
		return false
	}

	if !mayProbe(w.kind, &w.spec, &c, w.m.cfg.Clock.Now()) {
		return true
	}

	result, output, err := w.m.probe(ctx, w.kind, pod, &status, &w.container, w.containerID)
	if err != nil {
		return true // the probe could not run: the run does not count
	}
	w.lastResult, w.resultRun = countRun(w.lastResult, w.resultRun, result)
	if !thresholdReached(&w.spec, result, w.resultRun) {
		return true
	}
	w.set(ctx, pod, result, output)
	if holdAfter(w.kind, result) {
		// The container will be killed (liveness Failure, startup Failure) or has started
		// (startup Success): no more probes until a new container ID.
		w.onHold = true
		w.resultRun = 0
	}
	return true
}

// set stores r for the current container and journals a change.
func (w *worker) set(ctx context.Context, pod *corev1.Pod, r Result, output string) {
	if !w.results.set(ctx, w.containerID, r, pod) {
		return
	}
	if j := w.m.cfg.Journal; j.Enabled() {
		j.Record(strings.ToLower(w.kind.String()), journal.Pod(pod),
			map[string]string{"result": r.String(), "container": w.container.Name, "output": output})
	}
}

// startDelay is how long a new worker waits before its first probe: right after a kubelet
// (re)start (less than a period ago) every worker would probe at once, so each waits r (random in
// [0, 1)) of a period; later, none. Upstream: the same, with an uninterruptible sleep. Pure.
func startDelay(period, sinceKubeletStart time.Duration, r float64) time.Duration {
	if period <= sinceKubeletStart {
		return 0
	}
	return time.Duration(r * float64(period))
}

// initialValue is the result a new container starts with: not ready until a readiness probe
// succeeds, alive until a liveness probe fails, unknown until a startup probe decides.
func initialValue(kind Kind) Result {
	switch kind {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	default:
		return Unknown
	}
}

// mayProbe is the gate before a probe of a running container: initialDelaySeconds must have
// passed since it started (whole seconds, as upstream), and a startup probe runs only until the
// container has started, the others only after. Pure.
func mayProbe(kind Kind, spec *corev1.Probe, c *corev1.ContainerStatus, now time.Time) bool {
	if int32(now.Sub(c.State.Running.StartedAt.Time).Seconds()) < spec.InitialDelaySeconds {
		return false
	}
	started := c.Started != nil && *c.Started
	return started == (kind != Startup)
}

// countRun adds result to the run of equal results. Pure.
func countRun(last Result, run int, result Result) (Result, int) {
	if result == last {
		return last, run + 1
	}
	return result, 1
}

// thresholdReached reports whether run equal results are enough to record result: failure
// needs failureThreshold in a row, success successThreshold. Pure.
func thresholdReached(spec *corev1.Probe, result Result, run int) bool {
	switch result {
	case Failure:
		return run >= int(spec.FailureThreshold)
	case Success:
		return run >= int(spec.SuccessThreshold)
	default:
		return true
	}
}

// holdAfter reports whether recording result ends probing of this container: a liveness
// Failure (it will be restarted) or any startup verdict. Pure.
func holdAfter(kind Kind, result Result) bool {
	return (kind == Liveness && result == Failure) || kind == Startup
}

// withDefaults fills the zero fields of a probe with the API server's defaults (period 10 s,
// timeout 1 s, success 1, failure 3). API pods have them already; static pods read from files
// are not defaulted by a scheme in minikubelet. Pure.
func withDefaults(p corev1.Probe) corev1.Probe {
	if p.PeriodSeconds <= 0 {
		p.PeriodSeconds = 10
	}
	if p.TimeoutSeconds <= 0 {
		p.TimeoutSeconds = 1
	}
	if p.SuccessThreshold <= 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold <= 0 {
		p.FailureThreshold = 3
	}
	return p
}

// findContainerStatus finds the status of the named container with a container ID: among the
// containers first, then the init containers (sidecars).
func findContainerStatus(status *corev1.PodStatus, name string) (corev1.ContainerStatus, bool) {
	for _, list := range [][]corev1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses} {
		for _, c := range list {
			if c.Name == name && c.ContainerID != "" {
				return c, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

// startedBefore reports whether c is running and started before t.
func startedBefore(c corev1.ContainerStatus, t time.Time) bool {
	if c.State.Running == nil {
		return false
	}
	s := c.State.Running.StartedAt.Time
	return !s.IsZero() && s.Before(t)
}

func isInitContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

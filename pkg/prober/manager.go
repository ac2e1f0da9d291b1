package prober

// The Manager: one worker per (pod, container, probe kind), started, stopped and looked up here
// (upstream: pkg/kubelet/prober/prober_manager.go AddPod, StopLivenessAndStartup, RemovePod,
// CleanupPods; UpdatePodStatus is in podstatus.go).

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Kind is the kind of a probe. Its String is upstream's probeType, which starts Event messages
// ("Liveness probe failed: …").
type Kind int

// The probe kinds.
const (
	Liveness Kind = iota
	Readiness
	Startup
)

// String is "Liveness", "Readiness" or "Startup".
func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	default:
		return "UNKNOWN"
	}
}

// Exec runs a probe's command in a container; the kubelet adapts CRI ExecSync to it.
type Exec interface {
	// ExecSync runs cmd in the container and waits for it to exit. containerID is the bare
	// runtime ID, without the "<runtime>://" prefix of the API form. The runtime ends the
	// command after timeout (CRI ExecSyncRequest.Timeout); then return an error with the gRPC
	// code DeadlineExceeded (what CRI returns) or one that wraps context.DeadlineExceeded, and
	// the probe fails with "command timed out". exitCode is the command's exit code; err is only
	// for a command that could not be run or did not finish. It blocks for up to timeout plus the
	// runtime's overhead, and must return when ctx ends. The caller keeps the returned slices.
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (stdout, stderr []byte, exitCode int32, err error)
}

// StatusProvider is where a worker reads its container's ID, state, start time and Started: the
// status manager's cache of the status the kubelet last computed.
type StatusProvider interface {
	// GetPodStatus returns the pod's cached status and true, or false when there is none (yet).
	// It must not block; the prober only reads the returned status.
	GetPodStatus(uid types.UID) (corev1.PodStatus, bool)
}

// Config configures a Manager.
type Config struct {
	// Exec runs exec probes. Required.
	Exec Exec
	// Status gives the workers the pod status to probe against. Required.
	Status StatusProvider
	// Liveness, Readiness and Startup receive the results of each kind. Required; the syncLoop
	// selects on their Updates, kuberuntime and the status manager read them.
	Liveness, Readiness, Startup *ResultsManager
	// Recorder records the Unhealthy and ProbeWarning Events on the pod. Required.
	Recorder record.EventRecorder
	// Clock drives the workers' tickers, the initial delay and the kubelet-restart rules.
	// Defaults to the real clock.
	Clock clock.WithTicker
	// Journal, if set, records each change of a probe result (source "probe").
	Journal journal.Recorder
}

// Manager runs the probe workers and applies their results to pod statuses. Create it with New
// and start it with Run; AddPod may be called before Run (its workers start with Run).
type Manager struct {
	cfg Config
	// start is when New ran: a container running since before start-10s was running before the
	// kubelet restarted (the kubelet-restart rules in worker.go and podstatus.go).
	start time.Time
	// http is the transport of every HTTP probe: no keep-alives, no proxy, no compression.
	http *http.Transport

	mu      sync.Mutex
	workers map[probeKey]*worker
	// ctx is Run's context, nil before Run; workers run under it and end when it ends.
	ctx context.Context
	// stopped is set once ctx has ended: AddPod starts nothing after it, so no wg.Add races
	// with Run's wg.Wait.
	stopped bool
	wg      sync.WaitGroup // one per running worker goroutine
}

// probeKey names a worker.
type probeKey struct {
	podUID    types.UID
	container string
	kind      Kind
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Manager, error) {
	switch {
	case cfg.Exec == nil:
		return nil, errors.New("prober: Config.Exec is required: pass the CRI runtime's ExecSync")
	case cfg.Status == nil:
		return nil, errors.New("prober: Config.Status is required: pass the status manager")
	case cfg.Liveness == nil || cfg.Readiness == nil || cfg.Startup == nil:
		return nil, errors.New("prober: Config.Liveness, Readiness and Startup are required: make each with NewResultsManager")
	case cfg.Recorder == nil:
		return nil, errors.New("prober: Config.Recorder is required: pass the kubelet's event recorder")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, start: cfg.Clock.Now(), http: newHTTPTransport(), workers: map[probeKey]*worker{}}, nil
}

// Run starts the workers AddPod recorded, lets AddPod start the next ones at once, and blocks
// until ctx ends; then every worker stops, and Run returns when all of them have. Call it once.
func (m *Manager) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting probe manager")
	m.mu.Lock()
	m.ctx = ctx
	for _, w := range m.workers {
		m.startLocked(w)
	}
	m.mu.Unlock()

	<-ctx.Done()
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.wg.Wait()
	logger.Info("Stopped probe manager")
}

// startLocked starts w's goroutine under Run's context. m.mu is held.
func (m *Manager) startLocked(w *worker) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		w.run(m.ctx)
	}()
}

// AddPod starts a worker for each probe of each container and each restartable init container
// (sidecar) of pod. Call it on every sync, as upstream's SyncPod does: for workers that already
// exist it only hands them pod, which is how they see a deletionTimestamp (upstream's workers
// share one pod object that the pod config mutates in place). Probes of a running pod never
// change (the API forbids it), so nothing else is updated. It never blocks on a worker.
func (m *Manager) AddPod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	for _, c := range probedContainers(pod) {
		for _, kind := range []Kind{Startup, Readiness, Liveness} {
			if probeSpec(&c, kind) == nil {
				continue
			}
			key := probeKey{podUID: pod.UID, container: c.Name, kind: kind}
			if w, ok := m.workers[key]; ok {
				w.pod.Store(pod)
				continue
			}
			w := newWorker(m, kind, pod, c)
			m.workers[key] = w
			if m.ctx != nil {
				m.startLocked(w)
			}
		}
	}
}

// StopLivenessAndStartup stops the liveness and startup workers of pod's containers (not of its
// sidecars, as upstream); the kubelet calls it when the pod starts terminating, so a container
// being stopped is not killed again for failing its liveness probe. Readiness keeps probing.
func (m *Manager) StopLivenessAndStartup(pod *corev1.Pod) {
	m.stopWorkers(pod.UID, pod.Spec.Containers, Liveness, Startup)
}

// RemovePod stops every worker of pod; each forgets its results as it ends. The kubelet calls it
// once the pod's containers are stopped.
func (m *Manager) RemovePod(pod *corev1.Pod) {
	m.stopWorkers(pod.UID, probedContainers(pod), Liveness, Readiness, Startup)
}

func (m *Manager) stopWorkers(uid types.UID, containers []corev1.Container, kinds ...Kind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range containers {
		for _, kind := range kinds {
			if w, ok := m.workers[probeKey{podUID: uid, container: c.Name, kind: kind}]; ok {
				w.stop()
			}
		}
	}
}

// CleanupPods stops the workers of every pod not in desired (housekeeping).
func (m *Manager) CleanupPods(desired map[types.UID]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, w := range m.workers {
		if !desired[key.podUID] {
			w.stop()
		}
	}
}

// getWorker returns the worker of (pod, container, kind), if one is running or about to.
func (m *Manager) getWorker(uid types.UID, container string, kind Kind) (*worker, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.workers[probeKey{podUID: uid, container: container, kind: kind}]
	return w, ok
}

// removeWorker is called by a worker as it ends. It removes w only, not a successor with the
// same key that AddPod may have made since.
func (m *Manager) removeWorker(w *worker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := probeKey{podUID: w.podUID, container: w.container.Name, kind: w.kind}
	if m.workers[key] == w {
		delete(m.workers, key)
	}
}

// logger is Run's logger, for callers that bring no context (UpdatePodStatus).
func (m *Manager) logger() klog.Logger {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil {
		return klog.Background()
	}
	return klog.FromContext(m.ctx)
}

// resultsFor returns the results manager of kind.
func (m *Manager) resultsFor(kind Kind) *ResultsManager {
	switch kind {
	case Liveness:
		return m.cfg.Liveness
	case Readiness:
		return m.cfg.Readiness
	default:
		return m.cfg.Startup
	}
}

// probedContainers lists the containers that may have probes: the containers, then the
// restartable init containers (sidecars). Plain init containers are never probed.
func probedContainers(pod *corev1.Pod) []corev1.Container {
	out := append([]corev1.Container(nil), pod.Spec.Containers...)
	for _, c := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&c) {
			out = append(out, c)
		}
	}
	return out
}

// probeSpec is c's probe of kind, or nil.
func probeSpec(c *corev1.Container, kind Kind) *corev1.Probe {
	switch kind {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	default:
		return c.StartupProbe
	}
}

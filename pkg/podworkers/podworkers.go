package podworkers

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// UpdateType says why a pod worker is asked to sync.
type UpdateType int

const (
	SyncPodCreate UpdateType = iota // the pod appeared
	SyncPodUpdate                   // its spec or metadata changed
	SyncPodSync                     // periodic or PLEG-triggered resync
	SyncPodKill                     // stop it (deleted, evicted, orphaned)
)

func (t UpdateType) String() string {
	return [...]string{"create", "update", "sync", "kill"}[t]
}

// UpdatePodOptions is one request to a pod worker.
type UpdatePodOptions struct {
	UpdateType UpdateType
	// Pod is the desired pod; nil with RunningPod.
	Pod *corev1.Pod
	// MirrorPod is the API copy of a static pod, if any.
	MirrorPod *corev1.Pod
	// RunningPod, with SyncPodKill and no Pod, is a pod found only in the runtime (an orphan
	// housekeeping found): its worker stops it with SyncTerminatingRuntimePod (runtime_pods.go).
	RunningPod *kubecontainer.RunningPod
	// GracePeriodOverride, with SyncPodKill, shortens the grace period (never lengthens it).
	GracePeriodOverride *int64
}

// Syncer is what a pod worker calls: the kubelet's three sync functions.
type Syncer interface {
	// SyncPod brings a running pod towards its spec. isTerminal reports that the pod reached
	// Succeeded or Failed and should now be terminated. May block on the runtime.
	SyncPod(ctx context.Context, updateType UpdateType, pod, mirrorPod *corev1.Pod, status *kubecontainer.PodStatus) (isTerminal bool, err error)
	// SyncTerminatingPod stops every container within gracePeriod seconds. Returns nil only
	// when nothing of the pod runs any more.
	SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus, gracePeriod int64) error
	// SyncTerminatedPod finishes a pod whose containers have stopped: final status, cleanup.
	SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus) error
	// SyncTerminatingRuntimePod stops every container and sandbox of a pod known only from the
	// runtime: no spec, no status to publish. Returns nil only when nothing of it runs any more.
	SyncTerminatingRuntimePod(ctx context.Context, runningPod *kubecontainer.RunningPod) error
}

// Cache is the PLEG's pod cache: GetNewerThan blocks until it has a status of the pod newer than
// minTime (so a worker never acts on a status older than its own last sync).
type Cache interface {
	GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*kubecontainer.PodStatus, error)
}

// State is where a pod is in its life, as seen by its worker.
type State int

const (
	Syncing     State = iota // running towards its spec
	Terminating              // containers are being stopped
	Terminated               // containers stopped; final sync pending
	Finished                 // SyncTerminatedPod done: waits for housekeeping to remove the worker
)

func (s State) String() string {
	return [...]string{"syncing", "terminating", "terminated", "finished"}[s]
}

// Config configures the pod workers.
type Config struct {
	Syncer Syncer // required
	Cache  Cache  // required
	// ResyncInterval is how long after a successful sync a pod is due again (syncFrequency, 1 min).
	ResyncInterval time.Duration
	// BackOffPeriod is how long after a failed sync a pod is due again (upstream: 10 s).
	BackOffPeriod time.Duration
	// OnSync, if set, observes every sync: the update type and how long it took (metrics).
	OnSync func(updateType UpdateType, d time.Duration)
	Clock  clock.Clock
	// Journal, if set, records each worker's start and end and each state it enters.
	Journal journal.Recorder
}

// podStatus is the worker-side record of one pod.
type podStatus struct {
	state       State
	pod         *corev1.Pod // the latest desired pod
	mirrorPod   *corev1.Pod
	runningPod  *kubecontainer.RunningPod // set while the worker only knows the pod from the runtime
	gracePeriod int64                     // set when terminating starts; only ever shrinks
	// restartRequested: the pod was created again (same UID, e.g. a static pod's manifest put
	// back) while this worker was stopping it; once finished, the worker is replaced.
	restartRequested bool
	pending          *UpdatePodOptions
	working          bool
	// cancel ends the context of the running sync: a pod that must stop does not wait for a
	// SyncPod blocked on its volumes (upstream podSyncStatus.cancelFn).
	cancel   context.CancelFunc
	nextSync time.Time // when the pod is due for a resync (work queue)
	lastSync time.Time // when the last sync started: the next waits for a newer cache entry
	notify   chan struct{}
}

// PodWorkers runs one goroutine per pod UID. Create it with New, then Run it.
type PodWorkers struct {
	cfg Config
	ctx context.Context // set by Run: until then no worker goroutine starts

	mu   sync.Mutex
	pods map[types.UID]*podStatus
	wg   sync.WaitGroup
}

// New validates cfg and fills defaults. No worker runs until Run.
func New(cfg Config) (*PodWorkers, error) {
	if cfg.Syncer == nil || cfg.Cache == nil {
		return nil, errors.New("podworkers: Syncer and Cache are required")
	}
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = time.Minute
	}
	if cfg.BackOffPeriod == 0 {
		cfg.BackOffPeriod = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &PodWorkers{cfg: cfg, pods: map[types.UID]*podStatus{}}, nil
}

// Run lets the workers run: the workers of pods updated before it start now, the others when
// their pod's first update arrives. It blocks until ctx ends, then waits until every worker
// goroutine has returned. Call it once.
func (p *PodWorkers) Run(ctx context.Context) {
	p.mu.Lock()
	p.ctx = ctx
	for uid, st := range p.pods {
		p.startWorker(uid, st)
	}
	p.mu.Unlock()
	<-ctx.Done()
	p.wg.Wait()
}

// startWorker starts the goroutine of a pod's worker, once Run has been called. p.mu is held.
func (p *PodWorkers) startWorker(uid types.UID, st *podStatus) {
	if p.ctx == nil {
		return // Run starts it
	}
	p.wg.Add(1)
	go p.workerLoop(uid, st)
}

// UpdatePod hands an update to the pod's worker, starting the worker if needed. It never blocks:
// if the worker is busy, the update waits as the pending one (a newer update replaces it: they
// coalesce).
func (p *PodWorkers) UpdatePod(update UpdatePodOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if update.RunningPod != nil && update.Pod == nil && !p.runtimePodUpdate(&update) {
		return
	}
	uid := update.Pod.UID
	st, ok := p.pods[uid]
	if !ok {
		if update.UpdateType == SyncPodKill && update.RunningPod == nil {
			return // nothing of this pod was ever started by a worker
		}
		st = &podStatus{state: Syncing, notify: make(chan struct{}, 1)}
		p.pods[uid] = st
		p.startWorker(uid, st)
		p.cfg.Journal.Record("worker started", journal.Pod(update.Pod), nil)
		p.cfg.Journal.Record(Syncing.String(), journal.Pod(update.Pod), map[string]string{"updateType": update.UpdateType.String()})
	}
	st.pod, st.mirrorPod, st.runningPod = update.Pod, update.MirrorPod, update.RunningPod // a desired pod replaces a runtime pod
	if update.UpdateType == SyncPodCreate && st.state != Syncing {
		st.restartRequested = true
	}
	if next := nextState(st.state, update); next != st.state {
		if st.state == Syncing && st.cancel != nil {
			st.cancel() // the running SyncPod gives up: the pod is to stop
		}
		st.state = next
		st.gracePeriod = gracePeriodFor(update.Pod, update.GracePeriodOverride)
		p.cfg.Journal.Record(next.String(), journal.Pod(update.Pod), map[string]string{"updateType": update.UpdateType.String(), "gracePeriod": strconv.FormatInt(st.gracePeriod, 10)})
	} else if st.state == Terminating {
		st.gracePeriod = min(st.gracePeriod, gracePeriodFor(update.Pod, update.GracePeriodOverride))
	}
	u := update
	st.pending = &u
	select {
	case st.notify <- struct{}{}:
	default: // already signalled
	}
}

// workerLoop is the goroutine of one pod: it waits for a signal, then runs one sync.
func (p *PodWorkers) workerLoop(uid types.UID, st *podStatus) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.cfg.Journal.Record("worker done", journal.Pod(st.pod), map[string]string{"state": st.state.String()})
	}()
	for {
		select {
		case <-p.ctx.Done():
			return
		case _, ok := <-st.notify:
			if !ok {
				return // removed by SyncKnownPods
			}
		}
		p.syncOnce(uid, st)
	}
}

// syncOnce is one turn of a pod worker: take the pending update, wait for a fresh runtime status,
// call the sync function of the pod's state, and record the outcome.
func (p *PodWorkers) syncOnce(uid types.UID, st *podStatus) {
	p.mu.Lock()
	update := st.pending
	st.pending = nil
	state, pod, mirror, grace, lastSync, runningPod := st.state, st.pod, st.mirrorPod, st.gracePeriod, st.lastSync, st.runningPod
	if update == nil || state == Finished {
		p.mu.Unlock()
		return
	}
	st.working = true
	syncCtx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	st.cancel = cancel
	p.mu.Unlock()

	logger := klog.FromContext(p.ctx).WithValues("pod", klog.KObj(pod), "podUID", uid, "state", state)
	ctx := klog.NewContext(syncCtx, logger)
	start := p.cfg.Clock.Now()
	var status *kubecontainer.PodStatus
	var err error
	if runningPod == nil { // a runtime pod is only stopped: it needs no status
		status, err = p.cfg.Cache.GetNewerThan(ctx, uid, lastSync)
	}
	if err == nil {
		logger.V(4).Info("Pod worker syncing", "updateType", update.UpdateType)
		switch {
		case runningPod != nil:
			// Nothing to publish for a pod without a spec: stopped, it is finished (upstream
			// completeTerminatingRuntimePod).
			if err = p.cfg.Syncer.SyncTerminatingRuntimePod(ctx, runningPod); err == nil {
				p.transition(st, Terminating, Finished, grace)
			}
		case state == Syncing:
			var terminal bool
			terminal, err = p.cfg.Syncer.SyncPod(ctx, update.UpdateType, pod, mirror, status)
			if err == nil && terminal {
				p.transition(st, Syncing, Terminating, gracePeriodFor(pod, nil))
			}
		case state == Terminating:
			if err = p.cfg.Syncer.SyncTerminatingPod(ctx, pod, status, grace); err == nil {
				p.transition(st, Terminating, Terminated, grace)
			}
		case state == Terminated:
			if err = p.cfg.Syncer.SyncTerminatedPod(ctx, pod, status); err == nil {
				p.transition(st, Terminated, Finished, grace)
			}
		}
	}

	if p.cfg.OnSync != nil {
		p.cfg.OnSync(update.UpdateType, p.cfg.Clock.Since(start))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st.working, st.cancel = false, nil
	// The next sync must see a runtime status taken after this one ended, not one taken while it
	// ran (which may miss a container it just started), as upstream's lastSyncTime.
	st.lastSync = p.cfg.Clock.Now()
	if err != nil {
		retryIn := p.cfg.BackOffPeriod
		logSyncError(logger, err, retryIn, p.ctx.Err() != nil)
		st.nextSync = start.Add(retryIn)
		return
	}
	st.nextSync = start.Add(p.cfg.ResyncInterval)
	// A state change means there is more to do at once (terminating → terminated → finished).
	if st.state != state && st.state != Finished && st.pending == nil {
		st.pending = &UpdatePodOptions{UpdateType: SyncPodSync, Pod: st.pod, MirrorPod: st.mirrorPod}
		select {
		case st.notify <- struct{}{}:
		default:
		}
	}
}

func (p *PodWorkers) transition(st *podStatus, from, to State, grace int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.state == from {
		st.state = to
		if from == Syncing {
			st.gracePeriod = grace
		}
		if to != Finished {
			p.cfg.Journal.Record(to.String(), journal.Pod(st.pod), map[string]string{"gracePeriod": strconv.FormatInt(st.gracePeriod, 10)})
		}
	}
}

// SyncKnownPods is housekeeping's call: pods no longer desired start terminating, and workers of
// finished pods that are no longer desired are removed (their goroutine ends). It returns the
// state of every pod that still has a worker, and the desired pods whose finished worker was
// removed because they were created again meanwhile: the caller sends them a SyncPodCreate
// (upstream: SyncKnownPods' restartRequested).
func (p *PodWorkers) SyncKnownPods(desired map[types.UID]bool) (map[types.UID]State, []types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[types.UID]State{}
	var restart []types.UID
	for uid, st := range p.pods {
		switch {
		case st.state == Finished && !st.working && st.restartRequested && desired[uid]:
			delete(p.pods, uid)
			close(st.notify)
			restart = append(restart, uid)
			continue
		case desired[uid]:
		case st.state == Finished && !st.working:
			delete(p.pods, uid)
			close(st.notify)
			continue
		case (st.state == Terminating || st.state == Terminated) && !st.working && st.pending == nil &&
			!st.nextSync.IsZero() && !p.cfg.Clock.Now().Before(st.nextSync):
			// A failed termination of a pod nobody sends updates for any more: retry it here, as
			// upstream requeues orphaned workers on every housekeeping.
			st.pending = &UpdatePodOptions{UpdateType: SyncPodSync, Pod: st.pod}
			select {
			case st.notify <- struct{}{}:
			default:
			}
		case st.state == Syncing:
			st.state = Terminating
			st.gracePeriod = gracePeriodFor(st.pod, nil)
			p.cfg.Journal.Record(Terminating.String(), journal.Pod(st.pod), map[string]string{"reason": "not desired any more", "gracePeriod": strconv.FormatInt(st.gracePeriod, 10)})
			st.pending = &UpdatePodOptions{UpdateType: SyncPodKill, Pod: st.pod}
			select {
			case st.notify <- struct{}{}:
			default:
			}
		}
		out[uid] = st.state
	}
	return out, restart
}

// State reports a pod's state and whether it has a worker.
func (p *PodWorkers) State(uid types.UID) (State, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[uid]
	if !ok {
		return 0, false
	}
	return st.state, true
}

// CouldHaveRunningContainers reports whether the pod may still have running containers: true
// unless its worker has terminated it. Pods without a worker are unknown and count as possibly
// running only if they were never seen.
func (p *PodWorkers) CouldHaveRunningContainers(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[uid]
	return !ok || st.state == Syncing || st.state == Terminating
}

// Count returns the number of pod workers (for metrics and leak tests).
func (p *PodWorkers) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pods)
}

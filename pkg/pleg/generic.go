package pleg

// The relist loop and PLEG's health (upstream: generic.go GenericPLEG, Relist, updateCache,
// Healthy, Update).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Runtime is what PLEG needs from the container runtime (pkg/kuberuntime.Manager implements it).
type Runtime interface {
	// GetPods lists the runtime's pods; with all=true it includes exited containers and NOTREADY
	// sandboxes. It makes CRI calls and may block on them; the caller owns the result.
	GetPods(ctx context.Context, all bool) ([]*kubecontainer.RunningPod, error)
	// GetPodStatus inspects one pod's sandboxes and containers. It may block on CRI calls; the
	// caller owns the result.
	GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error)
}

// Config configures a GenericPLEG.
type Config struct {
	// Runtime is listed every RelistPeriod. Required.
	Runtime Runtime
	// Cache receives the status of every pod that changed, and the time of every relist. Required.
	Cache *Cache
	// Clock drives the relist ticker and the health check. Default: the real clock.
	Clock clock.WithTicker
	// RelistPeriod is the time between two relists (upstream default 1 s). Update changes it.
	RelistPeriod time.Duration
	// RelistThreshold is how long PLEG may go without a successful relist before Healthy reports
	// false (upstream default 3 min). It must be longer than RelistPeriod. Update changes it.
	RelistThreshold time.Duration
	// ChannelCapacity is the size of the event channel (upstream default 1000). When it is full,
	// events are dropped.
	ChannelCapacity int
	// OnRelist, if set, is called after every relist, successful or not, with its duration
	// (for the pleg_relist_duration_seconds metric).
	OnRelist func(d time.Duration)
	// Journal, if set, records every event PLEG sends (ContainerStarted, ContainerDied,
	// ContainerRemoved), with the pod, the container or sandbox ID, and how it was seen ("via":
	// relist, or event for the evented PLEG's).
	Journal journal.Recorder
}

// RelistDuration is how often the generic PLEG relists and how long it may go without a
// successful relist before it is unhealthy (upstream pleg.RelistDuration).
type RelistDuration struct {
	RelistPeriod    time.Duration
	RelistThreshold time.Duration
}

// validate refuses durations that cannot work.
func (d RelistDuration) validate() error {
	if d.RelistPeriod <= 0 || d.RelistThreshold <= d.RelistPeriod {
		return fmt.Errorf("pleg: relist threshold %s must be longer than the relist period %s, and both positive: a relist takes time, and a threshold too close to the period makes the node flap between healthy and unhealthy", d.RelistThreshold, d.RelistPeriod)
	}
	return nil
}

// GenericPLEG polls the runtime and turns the differences between two polls into
// PodLifecycleEvents. Create it with New, run it with Run, read events from Watch.
type GenericPLEG struct {
	cfg    Config
	events chan *PodLifecycleEvent
	// soon holds one pending RelistSoon request: more requests while it is full coalesce.
	soon chan struct{}
	// updated holds one pending Update: Run relists at once and ticks at the new period.
	updated chan struct{}
	// started is when New ran: before the first successful relist, health is measured from here.
	started time.Time

	// relistMu serialises relists; it guards records.
	relistMu sync.Mutex
	// records holds each pod as the last relist that processed it saw it. A pod is dropped when
	// it has disappeared from the runtime. A pod whose status could not be read keeps its older
	// record, so the same events are computed again on the next relist.
	records map[types.UID]*kubecontainer.RunningPod

	// mu guards lastRelist and duration, which Healthy and Update use from other goroutines.
	mu sync.Mutex
	// lastRelist is when the last successful relist started; zero before the first.
	lastRelist time.Time
	// duration is the current relist period and threshold: the Config's until Update.
	duration RelistDuration
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*GenericPLEG, error) {
	if cfg.Runtime == nil || cfg.Cache == nil {
		return nil, errors.New("pleg: Config.Runtime and Config.Cache are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.RelistPeriod == 0 {
		cfg.RelistPeriod = time.Second
	}
	if cfg.RelistThreshold == 0 {
		cfg.RelistThreshold = 3 * time.Minute
	}
	if cfg.ChannelCapacity == 0 {
		cfg.ChannelCapacity = 1000
	}
	duration := RelistDuration{RelistPeriod: cfg.RelistPeriod, RelistThreshold: cfg.RelistThreshold}
	if err := duration.validate(); err != nil {
		return nil, err
	}
	if cfg.ChannelCapacity < 0 {
		return nil, fmt.Errorf("pleg: channel capacity %d must not be negative", cfg.ChannelCapacity)
	}
	return &GenericPLEG{
		cfg:      cfg,
		events:   make(chan *PodLifecycleEvent, cfg.ChannelCapacity),
		soon:     make(chan struct{}, 1),
		updated:  make(chan struct{}, 1),
		started:  cfg.Clock.Now(),
		records:  map[types.UID]*kubecontainer.RunningPod{},
		duration: duration,
	}, nil
}

// Watch returns the channel of events. There is one channel: one consumer (the sync loop).
func (g *GenericPLEG) Watch() <-chan *PodLifecycleEvent {
	return g.events
}

// Run relists at once and then every RelistPeriod, and whenever RelistSoon asks, until ctx is
// done. After an Update it relists at once and then ticks at the new period. It blocks.
func (g *GenericPLEG) Run(ctx context.Context) {
	d := g.relistDuration()
	klog.FromContext(ctx).Info("Starting PLEG", "relistPeriod", d.RelistPeriod, "relistThreshold", d.RelistThreshold)
	ticker := g.cfg.Clock.NewTicker(d.RelistPeriod)
	defer func() { ticker.Stop() }() // the ticker of the moment, not the first one
	for {
		g.Relist(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-g.soon:
		case <-g.updated:
			ticker.Stop()
			ticker = g.cfg.Clock.NewTicker(g.relistDuration().RelistPeriod)
		}
	}
}

// Update changes the relist period and health threshold while Run runs (upstream Update, which
// must be wrapped in Stop and Start): Run relists at once, then every d.RelistPeriod. The evented
// PLEG calls it when its stream comes up (a long period: the relist is only a safety net) and
// when the stream breaks (back to every second). d must be valid, as New checks its Config.
func (g *GenericPLEG) Update(d RelistDuration) {
	g.mu.Lock()
	g.duration = d
	g.mu.Unlock()
	select {
	case g.updated <- struct{}{}:
	default: // one is pending already: Run reads the newest duration
	}
}

// relistDuration returns the current relist period and threshold.
func (g *GenericPLEG) relistDuration() RelistDuration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.duration
}

// RelistSoon asks Run for a relist now instead of at the next tick. A pod worker that has just
// started or stopped containers calls it, so that their new state reaches the pod's status in
// milliseconds rather than up to RelistPeriod later. Requests made while one is pending coalesce
// into one relist, so 100 pods starting at once cost a few relists, not 100. (Upstream gets the
// same effect from the evented PLEG, which listens to the runtime's container events; our
// EventedPLEG does too, and passes RelistSoon on only while its stream is not trusted.)
func (g *GenericPLEG) RelistSoon() {
	select {
	case g.soon <- struct{}{}:
	default: // one is pending already
	}
}

// Healthy reports whether PLEG relisted successfully within RelistThreshold. Before the first
// successful relist it is healthy for RelistThreshold after New (upstream reports unhealthy at
// once; we give a starting kubelet the same grace as a running one, and still catch a runtime
// that never answers).
func (g *GenericPLEG) Healthy() (bool, error) {
	g.mu.Lock()
	last, threshold := g.lastRelist, g.duration.RelistThreshold
	g.mu.Unlock()
	if err := checkHealth(g.cfg.Clock.Now(), g.started, last, threshold); err != nil {
		return false, err
	}
	return true, nil
}

// checkHealth decides PLEG's health: an error when the last successful relist (or, if there was
// none, the start) is more than threshold before now.
func checkHealth(now, started, lastRelist time.Time, threshold time.Duration) error {
	if lastRelist.IsZero() {
		if elapsed := now.Sub(started); elapsed > threshold {
			return fmt.Errorf("pleg has yet to be successful; it started %v ago; threshold is %v", elapsed, threshold)
		}
		return nil
	}
	if elapsed := now.Sub(lastRelist); elapsed > threshold {
		return fmt.Errorf("pleg was last seen active %v ago; threshold is %v", elapsed, threshold)
	}
	return nil
}

// Relist is one turn of the loop: list the runtime, compare every pod with its record, refresh
// the cache for the pods that changed, send their events, and move the cache's global timestamp.
func (g *GenericPLEG) Relist(ctx context.Context) {
	g.relistMu.Lock()
	defer g.relistMu.Unlock()
	logger := klog.FromContext(ctx)

	// timestamp is taken before the runtime is asked: whatever we read reflects at least this.
	timestamp := g.cfg.Clock.Now()
	if g.cfg.OnRelist != nil {
		defer func() { g.cfg.OnRelist(g.cfg.Clock.Since(timestamp)) }()
	}
	logger.V(5).Info("Relisting")

	pods, err := g.cfg.Runtime.GetPods(ctx, true)
	if err != nil {
		logger.Error(err, "Unable to list pods from the runtime; retrying on the next relist")
		return
	}
	g.mu.Lock()
	g.lastRelist = timestamp
	g.mu.Unlock()

	current := make(map[types.UID]*kubecontainer.RunningPod, len(pods))
	for _, p := range pods {
		current[p.ID] = p
	}
	// Every pod seen now or at the last relist, in a stable order.
	uids := make([]types.UID, 0, len(current)+len(g.records))
	for uid := range current {
		uids = append(uids, uid)
	}
	for uid := range g.records {
		if _, ok := current[uid]; !ok {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	for _, uid := range uids {
		g.reconcilePod(ctx, uid, g.records[uid], current[uid], timestamp)
	}

	// Only now is every changed pod in the cache: unblock the workers of the unchanged ones.
	g.cfg.Cache.UpdateTime(timestamp)
}

// reconcilePod handles one pod within a relist: old is its record (nil if new), current what the
// runtime listed now (nil if gone).
func (g *GenericPLEG) reconcilePod(ctx context.Context, uid types.UID, old, current *kubecontainer.RunningPod, timestamp time.Time) {
	logger := klog.FromContext(ctx)
	events := podEvents(uid, containerStates(old), containerStates(current))
	if len(events) == 0 {
		return
	}

	pod := current
	if current == nil {
		pod = old
		// Nothing of the pod is left in the runtime.
		logger.V(4).Info("Pod is gone from the runtime; deleting its cached status", "podUID", uid)
		g.cfg.Cache.Delete(uid)
		delete(g.records, uid)
	} else {
		status, err := g.cfg.Runtime.GetPodStatus(ctx, uid, current.Name, current.Namespace)
		g.cfg.Cache.Set(uid, status, err, timestamp)
		if err != nil {
			// Keep the old record: the next relist computes these events again and retries.
			logger.Error(err, "Unable to inspect pod; retrying on the next relist", "pod", klog.KRef(current.Namespace, current.Name), "podUID", uid)
			return
		}
		logger.V(4).Info("Wrote pod status to the cache", "pod", klog.KRef(current.Namespace, current.Name), "podUID", uid)
		g.records[uid] = current
		logExits(logger, events, status)
	}

	for _, e := range events {
		if e.Type == ContainerChanged {
			continue // not reliable, and nobody acts on it (as upstream)
		}
		g.emit(logger, e, journal.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(uid)}, "relist")
	}
}

// emit records an event in the journal, with how PLEG saw it (via: relist or event), and sends
// it without blocking: when the channel is full the kubelet is far behind, and the event is
// dropped (the periodic sync is the safety net), as upstream.
func (g *GenericPLEG) emit(logger klog.Logger, e *PodLifecycleEvent, pod journal.PodRef, via string) {
	g.cfg.Journal.Record(string(e.Type), pod, map[string]string{"id": fmt.Sprint(e.Data), "via": via})
	select {
	case g.events <- e:
	default:
		logger.Error(nil, "Event channel is full, discarding this event", "podUID", e.ID, "event", e.Type, "containerID", e.Data)
	}
}

// logExits logs the exit code of each container a ContainerDied event is about.
func logExits(logger klog.Logger, events []*PodLifecycleEvent, status *kubecontainer.PodStatus) {
	for _, e := range events {
		if e.Type != ContainerDied {
			continue
		}
		for _, c := range status.Containers {
			if c.ID == e.Data {
				logger.V(2).Info("Container finished", "podUID", e.ID, "containerID", c.ID, "container", c.Name, "exitCode", c.ExitCode)
			}
		}
	}
}

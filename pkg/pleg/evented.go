package pleg

// The evented PLEG (KEP-3386, feature gate EventedPLEG; upstream: evented.go EventedPLEG,
// watchEventsChannel, processCRIEvents, processCRIEvent, Healthy, and kubelet.go's relist
// durations).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// globalCacheUpdatePeriod is how often, while the stream is trusted, the cache's global
// timestamp moves to now (upstream globalCacheUpdatePeriod): no event means no change, and pod
// workers waiting in GetNewerThan must not wait for a relist minutes away.
const globalCacheUpdatePeriod = 5 * time.Second

// EventsClient is what the evented PLEG needs from the CRI RuntimeService
// (runtimeapi.RuntimeServiceClient implements it).
type EventsClient interface {
	// GetContainerEvents opens the stream of container and sandbox events; it ends when ctx
	// does, or with the error that broke it. A runtime without it (containerd 1.6) answers
	// Unimplemented, at the first Recv.
	GetContainerEvents(ctx context.Context, in *runtimeapi.GetEventsRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse], error)
}

// EventedConfig configures an EventedPLEG.
type EventedConfig struct {
	// Generic is the relisting PLEG kept as the safety net and the fallback. Its Runtime reads
	// the status of an event's pod, its Cache receives it, its channel carries the events; its
	// Config's relist period and threshold are the fallback's (upstream 1 s, 3 min). Required;
	// the EventedPLEG runs it: do not run it yourself.
	Generic *GenericPLEG
	// Events opens the container events stream. Required.
	Events EventsClient
	// SafetyNet is the relist period and threshold while the stream is trusted (upstream
	// eventedPlegRelistPeriod 300 s, eventedPlegRelistThreshold 10 min, the defaults).
	SafetyNet RelistDuration
	// RetryInitial is the first wait before a broken stream is opened again, doubling up to
	// RetryMax (defaults 1 s and 2 min). Upstream gives up after 5 attempts instead.
	RetryInitial, RetryMax time.Duration
	// Journal, if set, records when the stream comes up ("stream up") and when PLEG falls back
	// to relisting ("stream down"). Events are recorded by Generic's Journal, with via=event.
	Journal journal.Recorder
}

// streamMode is what the evented PLEG relies on right now.
type streamMode int

const (
	modeStarting  streamMode = iota // the stream has not proved itself yet: relisting every second
	modeStreaming                   // the stream is trusted: relisting only as a safety net
	modeRelisting                   // the stream broke: relisting every second, retrying it
)

// EventedPLEG turns the runtime's container events into PodLifecycleEvents and pod cache
// updates, and keeps a GenericPLEG relisting beside it: rarely while the stream works, every
// second while it does not. Create it with NewEvented, run it with Run, read events from Watch.
type EventedPLEG struct {
	cfg      EventedConfig
	generic  *GenericPLEG
	clock    clock.WithTicker
	fallback RelistDuration // the generic PLEG's own period and threshold

	// mu guards mode, which RelistSoon reads from pod workers.
	mu   sync.Mutex
	mode streamMode
}

// NewEvented validates cfg and fills its defaults.
func NewEvented(cfg EventedConfig) (*EventedPLEG, error) {
	if cfg.Generic == nil || cfg.Events == nil {
		return nil, errors.New("pleg: EventedConfig.Generic and EventedConfig.Events are required")
	}
	if cfg.SafetyNet == (RelistDuration{}) {
		cfg.SafetyNet = RelistDuration{RelistPeriod: 300 * time.Second, RelistThreshold: 10 * time.Minute}
	}
	if cfg.RetryInitial == 0 {
		cfg.RetryInitial = time.Second
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = 2 * time.Minute
	}
	if err := cfg.SafetyNet.validate(); err != nil {
		return nil, err
	}
	if cfg.RetryInitial < 0 || cfg.RetryMax < cfg.RetryInitial {
		return nil, fmt.Errorf("pleg: stream retry back-off %s → %s: give a positive first wait and a longer or equal maximum", cfg.RetryInitial, cfg.RetryMax)
	}
	return &EventedPLEG{cfg: cfg, generic: cfg.Generic, clock: cfg.Generic.cfg.Clock, fallback: cfg.Generic.relistDuration()}, nil
}

// Watch returns the channel of events, the generic PLEG's: one consumer (the sync loop).
func (e *EventedPLEG) Watch() <-chan *PodLifecycleEvent { return e.generic.Watch() }

// Healthy is the generic PLEG's health, whose threshold follows the mode (10 min while the
// stream is trusted, 3 min otherwise), and false when the event channel is full (upstream
// EventedPLEG.Healthy).
func (e *EventedPLEG) Healthy() (bool, error) {
	if ch := e.generic.events; len(ch) == cap(ch) {
		return false, fmt.Errorf("pleg event channel is full with %d events: the sync loop is not reading them", len(ch))
	}
	return e.generic.Healthy()
}

// RelistSoon asks for a relist now, unless the stream is trusted: then the runtime reports the
// kubelet's own changes as events, and a relist would only repeat them.
func (e *EventedPLEG) RelistSoon() {
	if e.currentMode() != modeStreaming {
		e.generic.RelistSoon()
	}
}

func (e *EventedPLEG) currentMode() streamMode {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mode
}

// Run runs the generic PLEG's relist loop, and the stream loop: open the stream, apply its
// events until it breaks, fall back to relisting every second, wait (back-off), open it again.
// It blocks until ctx ends.
func (e *EventedPLEG) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.generic.Run(ctx)
	}()
	defer wg.Wait()
	backoff := e.newBackoff()
	for {
		trusted, err := e.watchOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if trusted {
			backoff = e.newBackoff() // it worked for a while: the next failure starts afresh
		}
		retryIn := backoff.Step()
		e.fallBack(ctx, err, retryIn)
		t := e.clock.NewTimer(retryIn)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// newBackoff is the wait before each new attempt: RetryInitial, doubling up to RetryMax.
func (e *EventedPLEG) newBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: e.cfg.RetryInitial, Factor: 2, Steps: 1 << 30, Cap: e.cfg.RetryMax}
}

// watchOnce is one turn of the stream loop: it opens the stream and applies its events until it
// breaks (the error says how) or ctx ends. A stream still open after one fallback relist period
// is trusted (useStream); trusted says whether that happened.
func (e *EventedPLEG) watchOnce(ctx context.Context) (trusted bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := e.cfg.Events.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		cancel()
		return false, err
	}
	received := make(chan *runtimeapi.ContainerEventResponse)
	ended := make(chan error, 1)
	recvDone := make(chan struct{})
	go func() { // Recv blocks: it gets a goroutine of its own, ended when ctx is
		defer close(recvDone)
		for {
			ev, err := stream.Recv()
			if err != nil {
				ended <- err
				return
			}
			select {
			case received <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { cancel(); <-recvDone }()

	settle := e.clock.NewTimer(e.fallback.RelistPeriod)
	defer settle.Stop()
	tick := e.clock.NewTicker(globalCacheUpdatePeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return trusted, ctx.Err()
		case err := <-ended:
			if errors.Is(err, io.EOF) {
				err = errors.New("the runtime ended the container events stream")
			}
			return trusted, err
		case ev := <-received:
			e.processEvent(ctx, ev)
		case <-settle.C():
			trusted = true
			e.useStream(ctx)
		case <-tick.C():
			if trusted {
				e.generic.cfg.Cache.UpdateTime(e.clock.Now())
			}
		}
	}
}

// useStream trusts the stream: the relist becomes a safety net. The generic PLEG relists once at
// once (Update), which covers whatever changed before the stream opened.
func (e *EventedPLEG) useStream(ctx context.Context) {
	e.mu.Lock()
	e.mode = modeStreaming
	e.mu.Unlock()
	e.generic.Update(e.cfg.SafetyNet)
	klog.FromContext(ctx).Info("Container events stream is up; relisting only as a safety net",
		"relistPeriod", e.cfg.SafetyNet.RelistPeriod, "relistThreshold", e.cfg.SafetyNet.RelistThreshold)
	e.cfg.Journal.Record("stream up", journal.PodRef{}, map[string]string{"relistPeriod": e.cfg.SafetyNet.RelistPeriod.String()})
}

// fallBack relies on the relist again, every second, after the stream broke with err; it says
// so once, when the mode changes, and logs further failures at -v=4 only.
func (e *EventedPLEG) fallBack(ctx context.Context, err error, retryIn time.Duration) {
	logger := klog.FromContext(ctx)
	e.mu.Lock()
	was := e.mode
	e.mode = modeRelisting
	e.mu.Unlock()
	if was == modeRelisting {
		logger.V(4).Info("Container events stream failed again; still relisting", "err", err, "retryIn", retryIn)
		return
	}
	e.generic.Update(e.fallback) // relists at once: it catches what the broken stream missed
	logger.Info("Container events stream is down; falling back to relisting", "reason", streamError(err),
		"relistPeriod", e.fallback.RelistPeriod, "retryIn", retryIn)
	e.cfg.Journal.Record("stream down", journal.PodRef{}, journal.WithError(map[string]string{
		"relistPeriod": e.fallback.RelistPeriod.String(), "retryIn": retryIn.String()}, err))
}

// streamError says why the stream broke, in a user's words.
func streamError(err error) string {
	if status.Code(err) == codes.Unimplemented {
		return "the runtime does not implement CRI GetContainerEvents (containerd 1.6 does not; 1.7 and later do): " + err.Error()
	}
	return err.Error()
}

// processEvent applies one container event (upstream processCRIEvents for one event, then
// processCRIEvent): it reads the pod's status, writes it to the cache stamped with the time
// before the read, and sends the event's PodLifecycleEvents — unless the cache already held a
// newer status (a relist read the runtime later, and reported the change itself).
func (e *EventedPLEG) processEvent(ctx context.Context, ev *runtimeapi.ContainerEventResponse) {
	logger := klog.FromContext(ctx)
	meta := ev.GetPodSandboxStatus().GetMetadata()
	if meta.GetUid() == "" {
		// Upstream ignores these too: the sandbox is gone, and the relist will catch up.
		logger.Error(nil, "Container event without its pod sandbox's status; ignoring it", "containerID", ev.GetContainerId(), "type", ev.GetContainerEventType())
		return
	}
	uid := types.UID(meta.GetUid())
	pod := journal.PodRef{Namespace: meta.GetNamespace(), Name: meta.GetName(), UID: meta.GetUid()}
	logger.V(4).Info("Container event", "pod", klog.KRef(pod.Namespace, pod.Name), "podUID", uid, "containerID", ev.GetContainerId(), "type", ev.GetContainerEventType())

	timestamp := e.clock.Now()
	podStatus, err := e.generic.cfg.Runtime.GetPodStatus(ctx, uid, meta.GetName(), meta.GetNamespace())
	if err != nil {
		logger.Error(err, "Unable to inspect the pod of a container event; relisting", "pod", klog.KRef(pod.Namespace, pod.Name), "podUID", uid)
		e.generic.RelistSoon()
		return
	}
	fresh := true
	if len(podStatus.Sandboxes) == 0 && len(podStatus.Containers) == 0 {
		e.generic.cfg.Cache.Delete(uid) // nothing of the pod is left in the runtime
	} else {
		fresh = e.generic.cfg.Cache.Set(uid, podStatus, nil, timestamp)
	}
	events := eventsOf(uid, ev)
	if !fresh && ev.GetContainerEventType() != runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT {
		logger.V(4).Info("A newer status of the pod is cached already; not sending the event", "podUID", uid, "containerID", ev.GetContainerId())
		return
	}
	logExits(logger, events, podStatus)
	for _, pe := range events {
		e.generic.emit(logger, pe, pod, "event")
	}
}

// eventsOf maps a CRI container event to the PodLifecycleEvents the kubelet acts on (upstream
// processCRIEvent). CREATED only refreshes the cache, as the relist ignores CREATED containers;
// DELETED is both a death and a removal, as the relist reports a container that vanished. Pure.
func eventsOf(uid types.UID, ev *runtimeapi.ContainerEventResponse) []*PodLifecycleEvent {
	event := func(t PodLifeCycleEventType) *PodLifecycleEvent {
		return &PodLifecycleEvent{ID: uid, Type: t, Data: ev.GetContainerId()}
	}
	switch ev.GetContainerEventType() {
	case runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT:
		return []*PodLifecycleEvent{event(ContainerStarted)}
	case runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT:
		return []*PodLifecycleEvent{event(ContainerDied)}
	case runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT:
		return []*PodLifecycleEvent{event(ContainerDied), event(ContainerRemoved)}
	default: // CONTAINER_CREATED_EVENT
		return nil
	}
}

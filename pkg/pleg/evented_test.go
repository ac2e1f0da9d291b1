package pleg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// fakeEvents hands out scripted streams: each GetContainerEvents call makes one and sends it on
// opened, where the test takes it to feed events or end it.
type fakeEvents struct {
	opened chan *fakeStream
}

var _ EventsClient = (*fakeEvents)(nil)

func (f *fakeEvents) GetContainerEvents(ctx context.Context, _ *runtimeapi.GetEventsRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[runtimeapi.ContainerEventResponse], error) {
	s := &fakeStream{ctx: ctx, events: make(chan *runtimeapi.ContainerEventResponse), end: make(chan error, 1)}
	f.opened <- s
	return s, nil
}

// fakeStream is one stream: Recv returns what the test sends on events, or the error on end.
type fakeStream struct {
	grpc.ClientStream // not used: only Recv is called
	ctx               context.Context
	events            chan *runtimeapi.ContainerEventResponse
	end               chan error
}

func (s *fakeStream) Recv() (*runtimeapi.ContainerEventResponse, error) {
	select {
	case ev := <-s.events:
		return ev, nil
	case err := <-s.end:
		return nil, err
	case <-s.ctx.Done():
		return nil, status.FromContextError(s.ctx.Err()).Err()
	}
}

// criEvent is a container event of pod uid, with the sandbox metadata the runtime sends.
func criEvent(uid, containerID string, t runtimeapi.ContainerEventType) *runtimeapi.ContainerEventResponse {
	return &runtimeapi.ContainerEventResponse{
		ContainerId: containerID, ContainerEventType: t,
		PodSandboxStatus: &runtimeapi.PodSandboxStatus{Id: "s-" + uid, Metadata: &runtimeapi.PodSandboxMetadata{Uid: uid, Name: "pod-" + uid, Namespace: "default"}},
	}
}

func newTestEvented(t *testing.T, j *journal.Journal) (*EventedPLEG, *GenericPLEG, *fakeRuntime, *testingclock.FakeClock, *fakeEvents) {
	t.Helper()
	g, rt, clk := newTestPLEG(t, Config{Journal: j.For(journal.SourcePLEG)})
	rt.listLatency = 0
	events := &fakeEvents{opened: make(chan *fakeStream, 10)}
	e, err := NewEvented(EventedConfig{Generic: g, Events: events, Journal: j.For(journal.SourcePLEG)})
	if err != nil {
		t.Fatal(err)
	}
	return e, g, rt, clk, events
}

// Upstream processCRIEvent: STARTED → ContainerStarted, STOPPED → ContainerDied, DELETED → both
// ContainerDied and ContainerRemoved, CREATED → none (the cache is refreshed all the same).
func TestEventsOf(t *testing.T) {
	tests := []struct {
		kind runtimeapi.ContainerEventType
		want []string
	}{
		{runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, nil},
		{runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT, []string{"p/ContainerStarted/c"}},
		{runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT, []string{"p/ContainerDied/c"}},
		{runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, []string{"p/ContainerDied/c", "p/ContainerRemoved/c"}},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			var got []string
			for _, e := range eventsOf("p", criEvent("p", "c", tc.kind)) {
				got = append(got, fmt.Sprintf("%s/%s/%v", e.ID, e.Type, e.Data))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("eventsOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// One event: the pod's status read at the event is cached, stamped with the time before the
// read, and the event is sent (journal: via=event) — unless a newer status is cached already.
func TestProcessEvent(t *testing.T) {
	exited := &kubecontainer.PodStatus{ID: "p", Sandboxes: []*runtimeapi.PodSandboxStatus{{Id: "s-p"}},
		Containers: []*kubecontainer.ContainerStatus{{ID: "c", Name: "app", State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 7}}}
	empty := &kubecontainer.PodStatus{ID: "p"}
	tests := []struct {
		name       string
		event      *runtimeapi.ContainerEventResponse
		cachedAt   int // seconds; -1: nothing cached before (the clock is at 0)
		answer     *kubecontainer.PodStatus
		statusErr  error
		wantEvents []string
		wantCached *kubecontainer.PodStatus // nil: the cache says the pod has nothing
		wantRelist bool
	}{
		{name: "STOPPED caches the status and sends ContainerDied", event: criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT),
			cachedAt: -1, answer: exited, wantEvents: []string{"p/ContainerDied/c"}, wantCached: exited},
		{name: "CREATED only caches", event: criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT),
			cachedAt: -1, answer: exited, wantCached: exited},
		{name: "an older cached status is replaced", event: criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT),
			cachedAt: -5, answer: exited, wantEvents: []string{"p/ContainerDied/c"}, wantCached: exited},
		{name: "a newer cached status wins, and the event is not sent", event: criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT),
			cachedAt: 5, answer: exited, wantCached: empty},
		{name: "DELETED of the last of the pod deletes its entry", event: criEvent("p", "s-p", runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT),
			cachedAt: 5, answer: empty, wantEvents: []string{"p/ContainerDied/s-p", "p/ContainerRemoved/s-p"}},
		{name: "DELETED is sent even when a newer status is cached", event: criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT),
			cachedAt: 5, answer: exited, wantEvents: []string{"p/ContainerDied/c", "p/ContainerRemoved/c"}, wantCached: empty},
		{name: "an event without sandbox metadata is ignored", event: &runtimeapi.ContainerEventResponse{ContainerId: "c", ContainerEventType: runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT},
			cachedAt: -1, answer: exited},
		{name: "a pod that cannot be inspected asks for a relist", event: criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT),
			cachedAt: -1, statusErr: errors.New("runtime busy"), wantRelist: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := journal.NewWithClock(16, clock.RealClock{})
			e, g, rt, clk, _ := newTestEvented(t, j)
			clk.SetTime(at(0))
			if tc.cachedAt != -1 {
				g.cfg.Cache.Set("p", empty, nil, at(tc.cachedAt))
			}
			rt.statusAnswer = map[types.UID]*kubecontainer.PodStatus{"p": tc.answer}
			rt.statusErr = tc.statusErr
			e.processEvent(testContext(t), tc.event)

			if got := drain(g.Watch()); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events %v, want %v", got, tc.wantEvents)
			}
			cached, _ := g.cfg.Cache.Get("p")
			if tc.wantCached == nil && (len(cached.Sandboxes) > 0 || len(cached.Containers) > 0) {
				t.Errorf("cached %+v, want nothing of the pod", cached)
			}
			if tc.wantCached != nil && cached != tc.wantCached {
				t.Errorf("cached %+v, want %+v", cached, tc.wantCached)
			}
			if got := len(g.soon) == 1; got != tc.wantRelist {
				t.Errorf("relist requested = %v, want %v", got, tc.wantRelist)
			}
			for _, ev := range j.Read(0, journal.Filter{}).Events {
				if ev.Fields["via"] != "event" || ev.Pod != "default/pod-p" {
					t.Errorf("journal %+v: want via=event for pod default/pod-p", ev)
				}
			}
		})
	}
}

// The back-off between two attempts at the stream: 1 s doubling up to 2 min (ours; upstream
// gives up after 5 attempts and relists every second from then on).
func TestStreamBackoff(t *testing.T) {
	e, _, _, _, _ := newTestEvented(t, nil)
	b := e.newBackoff()
	var got []time.Duration
	for range 10 {
		got = append(got, b.Step())
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 120, 120, 120}
	for i := range want {
		want[i] *= time.Second
	}
	if !slices.Equal(got, want) {
		t.Errorf("back-off %v, want %v", got, want)
	}
}

// stepUntil advances the fake clock 100 ms at a time until cond holds, so that timers made by
// other goroutines at any moment still fire; it returns the fake time that took.
func stepUntil(ctx context.Context, t *testing.T, clk *testingclock.FakeClock, what string, cond func() bool) time.Duration {
	t.Helper()
	start := clk.Now()
	err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		if cond() {
			return true, nil
		}
		clk.Step(100 * time.Millisecond)
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return clk.Since(start)
}

// kinds returns the kinds of the journal's PLEG events that are not about a pod.
func kinds(j *journal.Journal) []string {
	var got []string
	for _, e := range j.Read(0, journal.Filter{Source: journal.SourcePLEG}).Events {
		if e.Pod == "" {
			got = append(got, e.Kind)
		}
	}
	return got
}

// timerClock is a fake clock that records the duration of every timer made, in order, so a test
// can see which wait the PLEG chose and step exactly to it.
type timerClock struct {
	*testingclock.FakeClock
	mu     sync.Mutex
	timers []time.Duration
	seen   int // timers handed to the test by next
}

func (c *timerClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d) // registered before it is recorded: a Step after next fires it
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, d)
	return t
}

// next waits (in real time) for the next timer made and returns its duration.
func (c *timerClock) next(ctx context.Context, t *testing.T, what string) time.Duration {
	t.Helper()
	var d time.Duration
	err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.timers) > c.seen {
			d = c.timers[c.seen]
			c.seen++
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for the timer of %s: %v", what, err)
	}
	return d
}

// The stream's life: trusted after one fallback period open (relist every 5 min), events sent as
// they come; broken (Unimplemented) → relist every second, said once, retried after 1 s, 2 s, …;
// trusted again once a new stream stays open, and the back-off starts afresh after a trusted
// stream breaks. Every wait is read from the timer the PLEG armed, then stepped to exactly.
func TestEventedStreamLifecycle(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	j := journal.NewWithClock(64, clock.RealClock{})
	clk := &timerClock{FakeClock: testingclock.NewFakeClock(at(0))}
	rt := &fakeRuntime{clock: clk.FakeClock}
	g, err := New(Config{Runtime: rt, Cache: NewCache(clk), Clock: clk, Journal: j.For(journal.SourcePLEG)})
	if err != nil {
		t.Fatal(err)
	}
	events := &fakeEvents{opened: make(chan *fakeStream, 10)}
	e, err := NewEvented(EventedConfig{Generic: g, Events: events, Journal: j.For(journal.SourcePLEG)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.Run(ctx)
	}()
	defer func() { cancel(); wg.Wait() }()
	fallback, safetyNet := RelistDuration{time.Second, 3 * time.Minute}, RelistDuration{300 * time.Second, 10 * time.Minute}
	journalSays := func(want ...string) {
		t.Helper()
		if err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
			return slices.Equal(kinds(j), want), nil
		}); err != nil {
			t.Fatalf("journal %v, want %v", kinds(j), want)
		}
	}
	// open takes the next stream and steps through its settling period: it is trusted.
	open := func(what string) *fakeStream {
		t.Helper()
		s := <-events.opened
		if d := clk.next(ctx, t, what+": settling"); d != fallback.RelistPeriod {
			t.Fatalf("%s trusted after %s, want one fallback relist period", what, d)
		}
		if d := g.relistDuration(); d == safetyNet {
			t.Errorf("%s: the safety net before the stream proved itself", what)
		}
		return s
	}
	// breakIt ends the stream with err and returns the wait before the next attempt, stepped.
	breakIt := func(s *fakeStream, err error) time.Duration {
		t.Helper()
		s.end <- err
		d := clk.next(ctx, t, "the retry")
		clk.Step(d)
		return d
	}

	s := open("the first stream")
	clk.Step(time.Second)
	journalSays("stream up")
	if d := g.relistDuration(); d != safetyNet {
		t.Errorf("relist with a trusted stream: %+v, want the safety net %+v", d, safetyNet)
	}

	// An event: cached and sent.
	rt.statusAnswer = map[types.UID]*kubecontainer.PodStatus{"p": {ID: "p", Sandboxes: []*runtimeapi.PodSandboxStatus{{Id: "s-p"}}}}
	s.events <- criEvent("p", "c", runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	if ev := next(ctx, t, g.Watch()); ev.Type != ContainerStarted || ev.Data != "c" {
		t.Errorf("event from the stream: %+v", ev)
	}

	// Unimplemented: back to relisting every second, said once in the journal, retried after 1 s,
	// then 2 s.
	if d := breakIt(s, status.Error(codes.Unimplemented, "unknown method GetContainerEvents")); d != time.Second {
		t.Errorf("first retry after %s, want 1s", d)
	}
	if d := g.relistDuration(); d != fallback {
		t.Errorf("relist after the stream broke: %+v, want %+v", d, fallback)
	}
	s = open("the second stream")
	if d := breakIt(s, status.Error(codes.Unimplemented, "unknown method GetContainerEvents")); d != 2*time.Second {
		t.Errorf("second retry after %s, want 2s", d)
	}
	journalSays("stream up", "stream down") // the second failure is not news
	var down journal.Event
	for _, ev := range j.Read(0, journal.Filter{Source: journal.SourcePLEG}).Events {
		if ev.Kind == "stream down" {
			down = ev
		}
	}
	if !strings.Contains(down.Fields["error"], "Unimplemented") || down.Fields["relistPeriod"] != "1s" || down.Fields["retryIn"] != "1s" {
		t.Errorf("stream down %v: want the error, the relist period and the retry", down.Fields)
	}

	// The third stream stays open: trusted again; when it breaks, the back-off starts at 1 s.
	s = open("the third stream")
	clk.Step(time.Second)
	journalSays("stream up", "stream down", "stream up")
	if d := g.relistDuration(); d != safetyNet {
		t.Errorf("relist with the stream back: %+v, want %+v", d, safetyNet)
	}
	if d := breakIt(s, errors.New("connection reset")); d != time.Second {
		t.Errorf("retry after a trusted stream broke: %s, want 1s (the back-off starts afresh)", d)
	}
	journalSays("stream up", "stream down", "stream up", "stream down")
	<-events.opened // the fourth attempt
}

// RelistSoon relists unless the stream is trusted: then the runtime's events report the
// kubelet's own changes.
func TestEventedRelistSoon(t *testing.T) {
	ctx := testContext(t)
	e, g, _, _, _ := newTestEvented(t, nil)
	for _, step := range []struct {
		name string
		do   func()
		want bool
	}{
		{"starting", func() {}, true},
		{"stream trusted", func() { e.useStream(ctx) }, false},
		{"stream broken", func() { e.fallBack(ctx, errors.New("broken"), time.Second) }, true},
	} {
		step.do()
		for len(g.soon) > 0 {
			<-g.soon
		}
		e.RelistSoon()
		if got := len(g.soon) == 1; got != step.want {
			t.Errorf("%s: RelistSoon asked for a relist: %v, want %v", step.name, got, step.want)
		}
	}
}

// Health: the generic PLEG's, with the threshold of the mode, and false when the event channel
// is full (upstream EventedPLEG.Healthy).
func TestEventedHealthy(t *testing.T) {
	ctx := testContext(t)
	e, g, _, clk, _ := newTestEvented(t, nil)
	g.Relist(ctx)
	e.useStream(ctx)
	clk.Step(5 * time.Minute) // a relist every 5 min is fine with a trusted stream
	if ok, err := e.Healthy(); !ok {
		t.Errorf("Healthy 5 min after a relist with a trusted stream: %v", err)
	}
	e.fallBack(ctx, errors.New("broken"), time.Second)
	if ok, err := e.Healthy(); ok || !strings.Contains(fmt.Sprint(err), "threshold is 3m0s") {
		t.Errorf("Healthy 5 min after a relist without the stream = %v, %v; want the 3 min threshold", ok, err)
	}
	g.Relist(ctx)
	for range cap(g.events) {
		g.events <- &PodLifecycleEvent{}
	}
	if ok, err := e.Healthy(); ok || !strings.Contains(fmt.Sprint(err), "channel is full") {
		t.Errorf("Healthy with a full channel = %v, %v", ok, err)
	}
}

// NewEvented fills upstream's safety-net durations and refuses what cannot work.
func TestNewEventedValidates(t *testing.T) {
	g, _, _ := newTestPLEG(t, Config{})
	e, err := NewEvented(EventedConfig{Generic: g, Events: &fakeEvents{}})
	if err != nil {
		t.Fatal(err)
	}
	if e.cfg.SafetyNet != (RelistDuration{300 * time.Second, 10 * time.Minute}) || e.fallback != (RelistDuration{time.Second, 3 * time.Minute}) {
		t.Errorf("safety net %+v, fallback %+v", e.cfg.SafetyNet, e.fallback)
	}
	for _, cfg := range []EventedConfig{
		{Events: &fakeEvents{}},
		{Generic: g},
		{Generic: g, Events: &fakeEvents{}, SafetyNet: RelistDuration{time.Minute, time.Minute}},
		{Generic: g, Events: &fakeEvents{}, RetryInitial: time.Minute, RetryMax: time.Second},
	} {
		if _, err := NewEvented(cfg); err == nil {
			t.Errorf("NewEvented(%+v) accepted it", cfg)
		}
	}
}

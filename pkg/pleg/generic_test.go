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

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// fakeRuntime returns scripted pods. GetPods steps the clock by listLatency, so a test can tell
// the time a relist started from the time the runtime answered.
type fakeRuntime struct {
	clock       *testingclock.FakeClock
	listLatency time.Duration

	mu           sync.Mutex
	pods         []*kubecontainer.RunningPod
	listErr      error
	statusErr    error
	statusCalls  []types.UID
	statusAnswer map[types.UID]*kubecontainer.PodStatus
}

var _ Runtime = (*fakeRuntime)(nil)

func (f *fakeRuntime) GetPods(_ context.Context, all bool) ([]*kubecontainer.RunningPod, error) {
	if !all {
		return nil, errors.New("PLEG must list all pods, exited ones included")
	}
	f.clock.Step(f.listLatency)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods, f.listErr
}

func (f *fakeRuntime) GetPodStatus(_ context.Context, uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusCalls = append(f.statusCalls, uid)
	if f.statusErr != nil {
		return nil, f.statusErr
	}
	if st, ok := f.statusAnswer[uid]; ok {
		return st, nil
	}
	return &kubecontainer.PodStatus{ID: uid, Name: name, Namespace: namespace}, nil
}

func (f *fakeRuntime) set(pods ...*kubecontainer.RunningPod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

// takeStatusCalls returns and forgets the pods GetPodStatus was asked about.
func (f *fakeRuntime) takeStatusCalls() []types.UID {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.statusCalls
	f.statusCalls = nil
	return calls
}

func runningPod(uid types.UID, sandboxes []*runtimeapi.PodSandbox, containers ...*runtimeapi.Container) *kubecontainer.RunningPod {
	return &kubecontainer.RunningPod{ID: uid, Name: "pod-" + string(uid), Namespace: "default", Sandboxes: sandboxes, Containers: containers}
}

func sandbox(id string, state runtimeapi.PodSandboxState) []*runtimeapi.PodSandbox {
	return []*runtimeapi.PodSandbox{{Id: id, State: state}}
}

func ctr(id string, state runtimeapi.ContainerState) *runtimeapi.Container {
	return &runtimeapi.Container{Id: id, State: state}
}

// drain returns the events waiting on the channel, as "Type/containerID" strings.
func drain(ch <-chan *PodLifecycleEvent) []string {
	var got []string
	for {
		select {
		case e := <-ch:
			got = append(got, fmt.Sprintf("%s/%s/%v", e.ID, e.Type, e.Data))
		default:
			return got
		}
	}
}

// next returns the next event, or fails when ctx (see testContext) ends first.
func next(ctx context.Context, t *testing.T, ch <-chan *PodLifecycleEvent) *PodLifecycleEvent {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-ctx.Done():
		t.Fatal("no event: the relist never happened")
		return nil
	}
}

func newTestPLEG(t *testing.T, cfg Config) (*GenericPLEG, *fakeRuntime, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(at(0))
	rt := &fakeRuntime{clock: clk, listLatency: time.Second}
	cfg.Runtime, cfg.Clock = rt, clk
	if cfg.Cache == nil {
		cfg.Cache = NewCache(clk)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, rt, clk
}

// Upstream generateEvents: the new state decides the event, and a container that disappears
// without having been seen exited is reported dead before it is reported removed.
func TestComputeEvents(t *testing.T) {
	const (
		running     = plegContainerRunning
		exited      = plegContainerExited
		unknown     = plegContainerUnknown
		nonExistent = plegContainerNonExistent
	)
	tests := []struct {
		old, new plegContainerState
		want     []PodLifeCycleEventType
	}{
		{old: nonExistent, new: running, want: []PodLifeCycleEventType{ContainerStarted}},
		{old: exited, new: running, want: []PodLifeCycleEventType{ContainerStarted}},
		{old: unknown, new: running, want: []PodLifeCycleEventType{ContainerStarted}},
		{old: running, new: exited, want: []PodLifeCycleEventType{ContainerDied}},
		{old: nonExistent, new: exited, want: []PodLifeCycleEventType{ContainerDied}},
		{old: unknown, new: exited, want: []PodLifeCycleEventType{ContainerDied}},
		{old: nonExistent, new: unknown, want: []PodLifeCycleEventType{ContainerChanged}},
		{old: running, new: unknown, want: []PodLifeCycleEventType{ContainerChanged}},
		{old: exited, new: unknown, want: []PodLifeCycleEventType{ContainerChanged}},
		{old: exited, new: nonExistent, want: []PodLifeCycleEventType{ContainerRemoved}},
		{old: running, new: nonExistent, want: []PodLifeCycleEventType{ContainerDied, ContainerRemoved}},
		{old: unknown, new: nonExistent, want: []PodLifeCycleEventType{ContainerDied, ContainerRemoved}},
		{old: running, new: running},
		{old: exited, new: exited},
		{old: unknown, new: unknown},
		{old: nonExistent, new: nonExistent},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s to %s", tc.old, tc.new), func(t *testing.T) {
			events := computeEvents("uid-1", "c1", tc.old, tc.new)
			var got []PodLifeCycleEventType
			for _, e := range events {
				if e.ID != "uid-1" || e.Data != "c1" {
					t.Errorf("event %+v does not name pod uid-1 and container c1", e)
				}
				got = append(got, e.Type)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("events = %v, want %v", got, tc.want)
			}
		})
	}
}

// Upstream convertState and sandboxToKubeContainer: CREATED and UNKNOWN containers are
// "unknown"; a READY sandbox counts as running and a NOTREADY one as exited.
func TestContainerStates(t *testing.T) {
	pod := runningPod("uid-1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_NOTREADY),
		ctr("c-created", runtimeapi.ContainerState_CONTAINER_CREATED),
		ctr("c-running", runtimeapi.ContainerState_CONTAINER_RUNNING),
		ctr("c-exited", runtimeapi.ContainerState_CONTAINER_EXITED),
		ctr("c-unknown", runtimeapi.ContainerState_CONTAINER_UNKNOWN))
	pod.Sandboxes = append(pod.Sandboxes, &runtimeapi.PodSandbox{Id: "s2", State: runtimeapi.PodSandboxState_SANDBOX_READY})
	want := map[string]plegContainerState{
		"c-created": plegContainerUnknown, "c-running": plegContainerRunning, "c-exited": plegContainerExited,
		"c-unknown": plegContainerUnknown, "s1": plegContainerExited, "s2": plegContainerRunning,
	}
	got := containerStates(pod)
	if len(got) != len(want) {
		t.Fatalf("states = %v, want %v", got, want)
	}
	for id, s := range want {
		if got[id] != s {
			t.Errorf("state of %s = %s, want %s", id, got[id], s)
		}
	}
	if len(containerStates(nil)) != 0 {
		t.Error("a pod that is not listed must have no containers")
	}
}

// Upstream GenericPLEG.Relist, step by step through a pod's life: each step lists the runtime
// once; events are sent only for what changed, GetPodStatus is called only for pods with events,
// and a pod that is gone from the runtime loses its cache entry.
func TestRelistLifecycle(t *testing.T) {
	const (
		ready    = runtimeapi.PodSandboxState_SANDBOX_READY
		notReady = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		running  = runtimeapi.ContainerState_CONTAINER_RUNNING
		exited   = runtimeapi.ContainerState_CONTAINER_EXITED
		created  = runtimeapi.ContainerState_CONTAINER_CREATED
	)
	steps := []struct {
		name        string
		pods        []*kubecontainer.RunningPod
		wantEvents  []string
		wantInspect bool // GetPodStatus is called for the pod
		wantCached  bool // the pod has a cache entry after the step
	}{
		{
			name:        "sandbox appears: started",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", ready))},
			wantEvents:  []string{"p1/ContainerStarted/s1"},
			wantCached:  true,
		},
		{
			name:        "container created: changed, not sent, cache refreshed",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", ready), ctr("c1", created))},
			wantCached:  true,
		},
		{
			name:        "container running: started",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", ready), ctr("c1", running))},
			wantEvents:  []string{"p1/ContainerStarted/c1"},
			wantCached:  true,
		},
		{
			name:       "nothing changes: no events, no inspection",
			pods:       []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", ready), ctr("c1", running))},
			wantCached: true,
		},
		{
			name:        "container exits: died",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", ready), ctr("c1", exited))},
			wantEvents:  []string{"p1/ContainerDied/c1"},
			wantCached:  true,
		},
		{
			name:        "container removed: removed",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", ready))},
			wantEvents:  []string{"p1/ContainerRemoved/c1"},
			wantCached:  true,
		},
		{
			name:        "sandbox NOTREADY: died, keyed by the sandbox ID",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s1", notReady))},
			wantEvents:  []string{"p1/ContainerDied/s1"},
			wantCached:  true,
		},
		{
			name:       "pod gone: removed, cache entry deleted",
			wantEvents: []string{"p1/ContainerRemoved/s1"},
		},
		{
			name:        "pod comes back with new IDs: started for each",
			wantInspect: true,
			pods:        []*kubecontainer.RunningPod{runningPod("p1", sandbox("s2", ready), ctr("c2", running))},
			wantEvents:  []string{"p1/ContainerStarted/c2", "p1/ContainerStarted/s2"},
			wantCached:  true,
		},
		{
			name:       "pod vanishes while running: died then removed for each",
			wantEvents: []string{"p1/ContainerDied/c2", "p1/ContainerRemoved/c2", "p1/ContainerDied/s2", "p1/ContainerRemoved/s2"},
		},
	}

	_, ctx := ktesting.NewTestContext(t)
	g, rt, clk := newTestPLEG(t, Config{})
	cache := g.cfg.Cache
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			rt.set(step.pods...)
			relistStart := clk.Now()
			g.Relist(ctx)

			if got := drain(g.Watch()); !slices.Equal(got, step.wantEvents) {
				t.Errorf("events = %v, want %v", got, step.wantEvents)
			}
			calls := rt.takeStatusCalls()
			inspected := len(calls) > 0
			if inspected != step.wantInspect {
				t.Errorf("GetPodStatus calls = %v, want a call: %v", calls, step.wantInspect)
			}

			cache.mu.Lock()
			entry, cached := cache.pods["p1"]
			global := cache.timestamp
			cache.mu.Unlock()
			if cached != step.wantCached {
				t.Fatalf("pod cached = %v, want %v", cached, step.wantCached)
			}
			// Entries and the global timestamp carry the time the relist started, before the
			// runtime was asked (the fake runtime takes a second to answer).
			if inspected && !entry.modified.Equal(relistStart) {
				t.Errorf("cache entry modified at %s, want the relist start %s", entry.modified, relistStart)
			}
			if !global.Equal(relistStart) {
				t.Errorf("cache timestamp = %s, want the relist start %s", global, relistStart)
			}
		})
	}
}

// Upstream reconcilePodRecord: when a pod cannot be inspected, the error goes into the cache,
// no event is sent, and the pod record is kept, so the next relist sees the same change again.
func TestRelistRetriesAPodThatCouldNotBeInspected(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	g, rt, _ := newTestPLEG(t, Config{})
	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_READY)))
	rt.statusErr = errors.New("container status: deadline exceeded")

	g.Relist(ctx)
	if got := drain(g.Watch()); len(got) != 0 {
		t.Errorf("events sent for a pod that could not be inspected: %v", got)
	}
	if _, err := g.cfg.Cache.Get("p1"); !errors.Is(err, rt.statusErr) {
		t.Errorf("cached error = %v, want the inspection error", err)
	}

	rt.statusErr = nil
	g.Relist(ctx)
	if got := drain(g.Watch()); !slices.Equal(got, []string{"p1/ContainerStarted/s1"}) {
		t.Errorf("events on retry = %v", got)
	}
	if st, err := g.cfg.Cache.Get("p1"); err != nil || st.Name != "pod-p1" {
		t.Errorf("cached after retry = %+v, %v", st, err)
	}
}

// Upstream Relist: a failed GetPods changes nothing (no events, no cache timestamp, no relist
// time), but its duration is still observed.
func TestRelistListFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	var durations []time.Duration
	g, rt, _ := newTestPLEG(t, Config{OnRelist: func(d time.Duration) { durations = append(durations, d) }})
	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_READY)))
	rt.listErr = errors.New("runtime unavailable")

	g.Relist(ctx)
	if got := drain(g.Watch()); len(got) != 0 {
		t.Errorf("events after a failed list: %v", got)
	}
	if !g.cfg.Cache.timestamp.IsZero() || !g.lastRelist.IsZero() {
		t.Errorf("a failed list moved the cache timestamp (%s) or the relist time (%s)", g.cfg.Cache.timestamp, g.lastRelist)
	}
	if !slices.Equal(durations, []time.Duration{time.Second}) {
		t.Errorf("OnRelist durations = %v, want [1s] (the fake list latency)", durations)
	}
}

// Upstream Relist: a full event channel drops the event and logs, it never blocks the relist.
func TestRelistDropsEventsWhenTheChannelIsFull(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	g, rt, _ := newTestPLEG(t, Config{ChannelCapacity: 1})
	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_READY), ctr("c1", runtimeapi.ContainerState_CONTAINER_RUNNING)))

	g.Relist(ctx) // two events, room for one
	if got := drain(g.Watch()); !slices.Equal(got, []string{"p1/ContainerStarted/c1"}) {
		t.Errorf("events = %v, want only the first", got)
	}
	if st, _ := g.cfg.Cache.Get("p1"); st.Name != "pod-p1" {
		t.Errorf("the cache must be updated even when events are dropped: %+v", st)
	}
}

// Upstream GenericPLEG.Healthy and TestHealthy: unhealthy when the last successful relist started
// more than the threshold ago (3 min by default), with upstream's message.
func TestCheckHealth(t *testing.T) {
	threshold := 3 * time.Minute
	tests := []struct {
		name       string
		now        time.Time
		lastRelist time.Time
		wantErr    string
	}{
		{name: "before the first relist, within the threshold", now: at(180)},
		{name: "before the first relist, past the threshold", now: at(181), wantErr: "pleg has yet to be successful; it started 3m1s ago; threshold is 3m0s"},
		{name: "recent relist", now: at(200), lastRelist: at(100)},
		{name: "relist exactly the threshold ago", now: at(280), lastRelist: at(100)},
		{name: "relist too long ago", now: at(281), lastRelist: at(100), wantErr: "pleg was last seen active 3m1s ago; threshold is 3m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkHealth(tc.now, at(0), tc.lastRelist, threshold)
			if got := fmt.Sprint(err); (err != nil || tc.wantErr != "") && got != tc.wantErr {
				t.Errorf("checkHealth = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// Healthy on a fake clock: healthy after New, still healthy right after a relist, unhealthy once
// the relists stop for longer than the threshold, healthy again after the next relist.
func TestHealthy(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	g, rt, clk := newTestPLEG(t, Config{})
	rt.listLatency = 0
	if ok, err := g.Healthy(); !ok || err != nil {
		t.Fatalf("Healthy before the first relist = %v, %v", ok, err)
	}
	g.Relist(ctx)
	clk.Step(3 * time.Minute)
	if ok, err := g.Healthy(); !ok || err != nil {
		t.Fatalf("Healthy exactly at the threshold = %v, %v", ok, err)
	}
	clk.Step(time.Second)
	ok, err := g.Healthy()
	if want := "pleg was last seen active 3m1s ago; threshold is 3m0s"; ok || err == nil || err.Error() != want {
		t.Fatalf("Healthy past the threshold = %v, %v; want false, %q", ok, err, want)
	}
	g.Relist(ctx)
	if ok, err := g.Healthy(); !ok || err != nil {
		t.Errorf("Healthy after a new relist = %v, %v", ok, err)
	}
}

// Run relists at once, then on every tick of the injected clock, until its context ends.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	g, rt, clk := newTestPLEG(t, Config{RelistPeriod: 2 * time.Second})
	rt.listLatency = 0
	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_READY)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx)
	}()

	if e := next(ctx, t, g.Watch()); e.Type != ContainerStarted || e.Data != "s1" {
		t.Fatalf("first relist: %+v", e)
	}
	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_NOTREADY)))
	clk.Step(2 * time.Second) // the ticker exists: it was created before the first relist
	if e := next(ctx, t, g.Watch()); e.Type != ContainerDied || e.Data != "s1" {
		t.Fatalf("relist on the tick: %+v", e)
	}
	// RelistSoon relists without waiting for the tick.
	rt.set()
	g.RelistSoon()
	if e := next(ctx, t, g.Watch()); e.Type != ContainerRemoved || e.Data != "s1" {
		t.Fatalf("relist on RelistSoon: %+v", e)
	}
	cancel()
	<-done
}

// Update (the evented PLEG switching between its safety net and its fallback) relists at once,
// then ticks at the new period, and Healthy uses the new threshold.
func TestUpdate(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	g, rt, clk := newTestPLEG(t, Config{})
	rt.listLatency = 0
	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_READY))) // before the first relist
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	if e := next(ctx, t, g.Watch()); e.Type != ContainerStarted {
		t.Fatalf("first relist: %+v", e)
	}

	rt.set(runningPod("p1", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_NOTREADY)))
	g.Update(RelistDuration{RelistPeriod: 5 * time.Minute, RelistThreshold: 10 * time.Minute})
	if e := next(ctx, t, g.Watch()); e.Type != ContainerDied {
		t.Fatalf("relist on Update: %+v", e) // no clock step: it relisted at once
	}
	rt.set()
	clk.Step(4 * time.Minute) // the old ticker is gone: nothing before the new period
	if got := drain(g.Watch()); len(got) != 0 {
		t.Errorf("a relist before the new period: %v", got)
	}
	if ok, err := g.Healthy(); !ok {
		t.Errorf("Healthy 4 min after a relist with a 10 min threshold: %v", err)
	}
	clk.Step(time.Minute)
	if e := next(ctx, t, g.Watch()); e.Type != ContainerRemoved {
		t.Errorf("relist at the new period: %+v", e)
	}
}

// New fills upstream's defaults and refuses settings that cannot work.
func TestNewValidates(t *testing.T) {
	rt := &fakeRuntime{}
	cache := NewCache(nil)
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "defaults", cfg: Config{Runtime: rt, Cache: cache}},
		{name: "no runtime", cfg: Config{Cache: cache}, wantErr: "Runtime and Config.Cache are required"},
		{name: "no cache", cfg: Config{Runtime: rt}, wantErr: "Runtime and Config.Cache are required"},
		{name: "threshold not above period", cfg: Config{Runtime: rt, Cache: cache, RelistPeriod: time.Minute, RelistThreshold: time.Minute}, wantErr: "must be longer than the relist period"},
		{name: "negative period", cfg: Config{Runtime: rt, Cache: cache, RelistPeriod: -time.Second}, wantErr: "both positive"},
		{name: "negative capacity", cfg: Config{Runtime: rt, Cache: cache, ChannelCapacity: -1}, wantErr: "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.cfg.RelistPeriod != time.Second || g.cfg.RelistThreshold != 3*time.Minute || cap(g.events) != 1000 || g.cfg.Clock == nil {
				t.Errorf("defaults = period %s, threshold %s, capacity %d, clock %v", g.cfg.RelistPeriod, g.cfg.RelistThreshold, cap(g.events), g.cfg.Clock)
			}
		})
	}
}

// The journal gets every event PLEG sends, named by pod (namespace/name) and container or
// sandbox ID — also for a pod that is gone from the runtime — and none of ContainerChanged.
func TestRelistRecordsEventsInTheJournal(t *testing.T) {
	j := journal.NewWithClock(16, clock.RealClock{})
	g, rt, _ := newTestPLEG(t, Config{Journal: j.For(journal.SourcePLEG)})
	ctx := context.Background()
	rt.set(runningPod("a", sandbox("s1", runtimeapi.PodSandboxState_SANDBOX_READY),
		ctr("c1", runtimeapi.ContainerState_CONTAINER_RUNNING), ctr("c2", runtimeapi.ContainerState_CONTAINER_CREATED)))
	g.Relist(ctx)
	rt.set()
	g.Relist(ctx)

	var got []string
	for _, e := range j.Read(0, journal.Filter{}).Events {
		if e.Source != journal.SourcePLEG || e.Pod != "default/pod-a" || e.UID != "a" {
			t.Errorf("event %+v: want source pleg, pod default/pod-a, UID a", e)
		}
		got = append(got, e.Kind+"/"+e.Fields["id"])
		if e.Fields["via"] != "relist" {
			t.Errorf("event %+v: want via=relist", e)
		}
	}
	want := []string{
		"ContainerStarted/c1", "ContainerStarted/s1",
		"ContainerDied/c1", "ContainerRemoved/c1", "ContainerDied/c2", "ContainerRemoved/c2", "ContainerDied/s1", "ContainerRemoved/s1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("journal %v, want %v", got, want)
	}
}

package prober

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
)

const (
	testUID         = types.UID("uid-1")
	testContainerID = "containerd://abc"
)

// fakeStatus is the status manager's cache.
type fakeStatus struct {
	mu       sync.Mutex
	statuses map[types.UID]corev1.PodStatus
}

var _ StatusProvider = (*fakeStatus)(nil)

func (f *fakeStatus) GetPodStatus(uid types.UID) (corev1.PodStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.statuses[uid]
	return *s.DeepCopy(), ok
}

func (f *fakeStatus) set(uid types.UID, s corev1.PodStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.statuses == nil {
		f.statuses = map[types.UID]corev1.PodStatus{}
	}
	f.statuses[uid] = s
}

// execReply is what one ExecSync returns.
type execReply struct {
	stdout, stderr []byte
	exitCode       int32
	err            error
}

// execCall is one ExecSync the test answers on reply.
type execCall struct {
	at          time.Time // the fake clock's time of the call
	containerID string
	cmd         []string
	timeout     time.Duration
	reply       chan execReply
}

// fakeExec answers every call with reply, or, when calls is set, hands each call to the test and
// waits for its answer (so a test knows exactly when a worker probes).
type fakeExec struct {
	clock *testingclock.FakeClock
	mu    sync.Mutex
	reply execReply
	n     int // calls so far
	last  *execCall
	calls chan execCall
}

var _ Exec = (*fakeExec)(nil)

func (f *fakeExec) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, int32, error) {
	call := execCall{at: f.clock.Now(), containerID: containerID, cmd: cmd, timeout: timeout, reply: make(chan execReply, 1)}
	f.mu.Lock()
	f.n++
	f.last = &call
	r, calls := f.reply, f.calls
	f.mu.Unlock()
	if calls != nil {
		select {
		case calls <- call:
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		}
		select {
		case r = <-call.reply:
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		}
	}
	return r.stdout, r.stderr, r.exitCode, r.err
}

func (f *fakeExec) setReply(r execReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply = r
}

func (f *fakeExec) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// event is one recorded Event.
type event struct {
	ref                     *corev1.ObjectReference
	eventType, reason, text string
}

// fakeRecorder keeps the Events with their object reference (record.FakeRecorder drops it).
type fakeRecorder struct {
	mu     sync.Mutex
	events []event
}

var _ record.EventRecorder = (*fakeRecorder)(nil)

func (r *fakeRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, _ := obj.(*corev1.ObjectReference)
	r.events = append(r.events, event{ref: ref, eventType: eventType, reason: reason, text: message})
}

func (r *fakeRecorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

func (r *fakeRecorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	r.Eventf(obj, eventType, reason, format, args...)
}

func (r *fakeRecorder) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// testEnv is a Manager on a fake clock. The clock is moved an hour past New, so that probes do
// not wait a random part of a period and containers started "now" are not from before a
// kubelet restart.
type testEnv struct {
	ctx      context.Context
	m        *Manager
	clock    *testingclock.FakeClock
	tickers  *tickerClock // the Manager's clock: clock, noting each ticker's period
	status   *fakeStatus
	exec     *fakeExec
	recorder *fakeRecorder
	journal  *journal.Journal
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := newFreshTestEnv(t)
	e.clock.Step(time.Hour)
	return e
}

// newFreshTestEnv is newTestEnv right after New: the kubelet has just started.
func newFreshTestEnv(t *testing.T) *testEnv {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e := &testEnv{
		ctx:      ctx,
		clock:    clk,
		status:   &fakeStatus{},
		exec:     &fakeExec{clock: clk},
		recorder: &fakeRecorder{},
	}
	e.journal = journal.NewWithClock(0, e.clock)
	e.tickers = &tickerClock{FakeClock: clk}
	m, err := New(Config{
		Exec: e.exec, Status: e.status, Recorder: e.recorder, Clock: e.tickers,
		Liveness: NewResultsManager(), Readiness: NewResultsManager(), Startup: NewResultsManager(),
		Journal: e.journal.For("probe"),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e
}

// execProbeSpec is an exec probe with the API's defaults.
func execProbeSpec() *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

// podWithProbe is a pod with one container "c" that has p as its probe of kind.
func podWithProbe(kind Kind, p *corev1.Probe) *corev1.Pod {
	c := corev1.Container{Name: "c"}
	switch kind {
	case Liveness:
		c.LivenessProbe = p
	case Readiness:
		c.ReadinessProbe = p
	case Startup:
		c.StartupProbe = p
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: testUID},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
	}
}

// runningStatus is a Running pod whose container "c" runs since startedAt, Started as given.
func runningStatus(startedAt time.Time, started bool) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		PodIP: "127.0.0.1",
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "c", ContainerID: testContainerID, Started: ptr.To(started),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}},
		}},
	}
}

// get returns a results manager's value for the test container, "none" when unset.
func get(rm *ResultsManager, id string) string {
	r, ok := rm.Get(id)
	if !ok {
		return "none"
	}
	return r.String()
}

// journalFilter selects the prober's journal events.
func journalFilter() journal.Filter { return journal.Filter{Source: "probe"} }

// tickerClock is a fake clock that notes the period of every ticker made.
type tickerClock struct {
	*testingclock.FakeClock
	mu      sync.Mutex
	periods []time.Duration
}

func (c *tickerClock) NewTicker(d time.Duration) clock.Ticker {
	c.mu.Lock()
	c.periods = append(c.periods, d)
	c.mu.Unlock()
	return c.FakeClock.NewTicker(d)
}

func (c *tickerClock) made() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.periods...)
}

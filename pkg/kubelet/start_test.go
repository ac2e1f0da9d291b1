package kubelet

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// trace records what the steps of a test did, in order.
type trace struct {
	mu     sync.Mutex
	events []string
}

func (t *trace) add(e string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, e)
}

func (t *trace) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.events, " ")
}

// runs is a step whose component records its start and, when its context ends, its stop.
func runs(tr *trace, name string) step {
	return step{name: name, start: func(context.Context) (component, error) {
		tr.add("start:" + name)
		return loop(func(ctx context.Context) {
			<-ctx.Done()
			tr.add("stop:" + name)
		}), nil
	}}
}

// once is a one-shot step.
func once(tr *trace, name string) step {
	return step{name: name, start: func(context.Context) (component, error) {
		tr.add("start:" + name)
		return nil, nil
	}}
}

func newStepTest(t *testing.T) (context.Context, *journal.Journal, *testingclock.FakeClock) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Now())
	return ctx, journal.NewWithClock(64, clk), clk
}

// The kubelet starts its components in the documented order and, on SIGTERM (the parent context's
// cancellation), stops them in the reverse order, each one gone before the one it uses stops:
// that is what lets the events step flush Events recorded by every later step.
func TestRunStepsStartsInOrderStopsInReverse(t *testing.T) {
	ctx, j, clk := newStepTest(t)
	ctx, cancel := context.WithCancel(ctx)
	tr := &trace{}
	last := step{name: "c", start: func(context.Context) (component, error) {
		tr.add("start:c")
		cancel() // everything started: now shut down
		return loop(func(ctx context.Context) { <-ctx.Done(); tr.add("stop:c") }), nil
	}}
	if err := runSteps(ctx, []step{runs(tr, "a"), once(tr, "b"), last}, j.For(journal.SourceStart), clk); err != nil {
		t.Fatalf("a clean shutdown returned %v", err)
	}
	if got, want := tr.String(), "start:a start:b start:c stop:c stop:a"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
	var kinds []string
	for _, e := range j.Read(0, journal.Filter{Source: journal.SourceStart}).Events {
		kinds = append(kinds, e.Kind+":"+e.Fields["step"])
	}
	if got, want := strings.Join(kinds, " "), "start:a start:b start:c stop:c stop:b stop:a"; got != want {
		t.Errorf("journal = %q, want %q", got, want)
	}
}

// A step that cannot start stops the kubelet with its error, named by the step, after stopping
// the steps that had started; the steps after it never start.
func TestRunStepsStartErrorStopsTheStarted(t *testing.T) {
	ctx, j, clk := newStepTest(t)
	tr := &trace{}
	broken := step{name: "tls-bootstrap", start: func(context.Context) (component, error) {
		return nil, errors.New("the CSR was denied")
	}}
	err := runSteps(ctx, []step{runs(tr, "a"), broken, runs(tr, "never")}, j.For(journal.SourceStart), clk)
	if err == nil || err.Error() != "tls-bootstrap: the CSR was denied" {
		t.Fatalf("err = %v, want the step's error named by the step", err)
	}
	if got, want := tr.String(), "start:a stop:a"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
}

// A component that fails while running (the kubelet API cannot listen) stops the whole kubelet
// with its error, as upstream exits; every other step is stopped, in reverse order.
func TestRunStepsComponentFailureStopsAll(t *testing.T) {
	ctx, j, clk := newStepTest(t)
	tr := &trace{}
	failing := step{name: "kubelet-api", start: func(context.Context) (component, error) {
		return runFunc(func(context.Context) error { return errors.New("address already in use") }), nil
	}}
	err := runSteps(ctx, []step{runs(tr, "a"), runs(tr, "b"), failing}, j.For(journal.SourceStart), clk)
	if err == nil || err.Error() != "kubelet-api: address already in use" {
		t.Fatalf("err = %v, want the component's error named by its step", err)
	}
	if got, want := tr.String(), "start:a start:b stop:b stop:a"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
}

// readyComponent is ready only when the test says so.
type readyComponent struct{ ready chan struct{} }

func (r readyComponent) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (r readyComponent) Ready() <-chan struct{}        { return r.ready }

// The step after a component with Ready (the fake runtime, whose socket the CRI step dials) starts
// only once that component is ready.
func TestRunStepsWaitsForReady(t *testing.T) {
	ctx, j, clk := newStepTest(t)
	ctx, cancel := context.WithCancel(ctx)
	tr := &trace{}
	rc := readyComponent{ready: make(chan struct{})}
	slow := step{name: "fake-runtime", start: func(context.Context) (component, error) {
		tr.add("start:fake-runtime")
		go func() { tr.add("ready:fake-runtime"); close(rc.ready) }()
		return rc, nil
	}}
	next := step{name: "cri", start: func(context.Context) (component, error) {
		tr.add("start:cri")
		cancel()
		return nil, nil
	}}
	if err := runSteps(ctx, []step{slow, next}, j.For(journal.SourceStart), clk); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.String(), "start:fake-runtime ready:fake-runtime start:cri"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
}

// SIGTERM while a step blocks (waiting for a CSR's approval) ends that step's wait and is a clean
// shutdown, not the step's "context canceled".
func TestRunStepsInterruptedStartIsClean(t *testing.T) {
	ctx, j, clk := newStepTest(t)
	ctx, cancel := context.WithCancel(ctx)
	tr := &trace{}
	blocking := step{name: "tls-bootstrap", start: func(ctx context.Context) (component, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	if err := runSteps(ctx, []step{runs(tr, "a"), blocking, runs(tr, "never")}, j.For(journal.SourceStart), clk); err != nil {
		t.Fatalf("err = %v, want nil (a clean shutdown)", err)
	}
	if got, want := tr.String(), "start:a stop:a"; got != want {
		t.Errorf("order = %q, want %q", got, want)
	}
}

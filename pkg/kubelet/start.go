package kubelet

import (
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// A step is one line of the start order (Kubelet.startOrder): a name and the work that starts it.
type step struct {
	// name is how the log, the journal (source "start") and docs/architecture.md call the step.
	name string
	// start does the step's one-shot work — load a certificate, build a component, register the
	// Node — and returns what keeps running afterwards, or nil when nothing does. ctx is the
	// step's own: it lives until the step is stopped, so whatever start hands it lives as long.
	start func(ctx context.Context) (component, error)
}

// component is what a step leaves running.
type component interface {
	// Run runs until ctx ends, then returns nil. An error while ctx is still live stops the whole
	// kubelet with that error, as upstream exits when a part it needs stops.
	Run(ctx context.Context) error
}

// readier is a component that needs time after it starts before the next step may use it (the
// fake runtime's socket): the steps wait for Ready to close.
type readier interface {
	Ready() <-chan struct{}
}

// loop makes a component of a loop that returns when ctx ends (most of ours: lease, PLEG, …).
type loop func(ctx context.Context)

func (l loop) Run(ctx context.Context) error { l(ctx); return nil }

// runFunc makes a component of a function with Run's contract.
type runFunc func(ctx context.Context) error

func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

// onStop is a component that only waits, then releases what its step made (closes a
// connection, flushes events) when the steps after it have stopped. runSteps gives it no
// goroutine of its own: it calls release when it stops the step.
func onStop(release func() error) component { return releaser(release) }

type releaser func() error

func (r releaser) Run(ctx context.Context) error { <-ctx.Done(); return r() }

// running is a started step, kept to stop it.
type running struct {
	name   string
	cancel context.CancelFunc
	done   chan error // receives Run's result; nil for a step that left nothing running
	// release, for an onStop component, is called when the step stops, instead of a Run.
	release func() error
}

// runSteps runs steps in order, then waits until parent ends or a component fails; then it stops
// the started steps in reverse order, each one's goroutine gone before the one before it is
// stopped. It returns the first error (a step that could not start, a component that failed,
// named by its step), or nil when parent ended. Every step is recorded in rec.
func runSteps(parent context.Context, steps []step, rec journal.Recorder, clk clock.PassiveClock) error {
	logger := klog.FromContext(parent)
	ctx, fail := context.WithCancelCause(parent)
	defer fail(nil)
	// Each step's context derives from base, which parent's cancellation does not reach: steps
	// are stopped one at a time by stopSteps, in reverse order, not all at once.
	base := context.WithoutCancel(parent)
	var started []running
	defer func() { stopSteps(logger, started, rec, clk) }()

	for _, s := range steps {
		if ctx.Err() != nil {
			break // asked to stop, or a component failed, while starting
		}
		begin := clk.Now()
		stepCtx, cancel := context.WithCancel(klog.NewContext(base, logger.WithName(s.name)))
		// A start that blocks (waiting for a CSR's approval, for the Node) ends when we must stop.
		detach := context.AfterFunc(ctx, cancel)
		c, err := s.start(stepCtx)
		detach()
		if err != nil {
			cancel()
			rec.Record("start", journal.PodRef{}, journal.WithError(map[string]string{"step": s.name}, err))
			if ctx.Err() != nil { // interrupted (SIGTERM while waiting for a CSR, a runtime): a clean stop
				logger.Info("Stopped while starting", "step", s.name, "interrupted", err.Error())
				break
			}
			return fmt.Errorf("%s: %w", s.name, err)
		}
		r := running{name: s.name, cancel: cancel}
		if rel, ok := c.(releaser); ok {
			r.release = rel
		} else if c != nil {
			r.done = make(chan error, 1)
			go func() {
				err := c.Run(stepCtx)
				if err != nil && stepCtx.Err() == nil {
					fail(fmt.Errorf("%s: %w", s.name, err))
				}
				r.done <- err
			}()
			if rd, ok := c.(readier); ok {
				select {
				case <-rd.Ready():
				case <-ctx.Done(): // the component failed (fail above), or we were asked to stop
				}
			}
		}
		started = append(started, r)
		rec.Record("start", journal.PodRef{}, map[string]string{"step": s.name, "took": clk.Since(begin).Round(time.Microsecond).String()})
		logger.V(2).Info("Started", "step", s.name, "running", c != nil)
	}
	if ctx.Err() == nil {
		logger.Info("minikubelet is running")
	}
	<-ctx.Done()
	if parent.Err() != nil {
		return nil // a clean shutdown
	}
	return context.Cause(ctx)
}

// stopSteps stops started steps, last first, waiting for each.
func stopSteps(logger klog.Logger, started []running, rec journal.Recorder, clk clock.PassiveClock) {
	if len(started) > 0 {
		logger.Info("Shutting down")
	}
	for i := len(started) - 1; i >= 0; i-- {
		r := started[i]
		begin := clk.Now()
		r.cancel()
		var err error
		switch {
		case r.done != nil:
			err = <-r.done
		case r.release != nil:
			err = r.release()
		}
		if err != nil {
			logger.Error(err, "Stopped with an error", "step", r.name)
		}
		rec.Record("stop", journal.PodRef{}, journal.WithError(map[string]string{"step": r.name, "took": clk.Since(begin).Round(time.Microsecond).String()}, err))
	}
}

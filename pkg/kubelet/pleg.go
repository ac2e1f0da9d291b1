package kubelet

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/metrics"
	"github.com/minikubelet/minikubelet/pkg/pleg"
)

// podLifecycleEventGenerator is what the kubelet needs of PLEG, generic or evented (upstream
// pleg.PodLifecycleEventGenerator).
type podLifecycleEventGenerator interface {
	// Run relists (and, evented, watches the runtime's events) until ctx ends. It blocks.
	Run(ctx context.Context)
	// Watch is the one channel of events; the syncLoop reads it.
	Watch() <-chan *pleg.PodLifecycleEvent
	// RelistSoon asks for a relist now, after a pod worker started or stopped something. It
	// never blocks.
	RelistSoon()
	// Healthy reports whether PLEG keeps up with the runtime (a node readiness check).
	Healthy() (bool, error)
}

var (
	_ podLifecycleEventGenerator = (*pleg.GenericPLEG)(nil)
	_ podLifecycleEventGenerator = (*pleg.EventedPLEG)(nil)
)

// plegConfig is what newPLEG needs.
type plegConfig struct {
	runtime pleg.Runtime
	cri     runtimeapi.RuntimeServiceClient // the container events stream, with evented
	cache   *pleg.Cache
	clock   clock.WithTicker
	metrics *metrics.Registry // optional
	journal *journal.Journal  // optional
	evented bool              // the EventedPLEG feature gate
}

// newPLEG makes the generic PLEG (relist every 1 s, unhealthy after 3 min without one), and with
// the EventedPLEG gate the evented one around it, which relists every 5 min (10 min threshold)
// while the runtime's event stream works (upstream NewMainKubelet; upstream starts the generic
// PLEG on the long period at once, ours switches once the stream has proved itself).
func newPLEG(cfg plegConfig) (podLifecycleEventGenerator, error) {
	genericCfg := pleg.Config{Runtime: cfg.runtime, Cache: cfg.cache, Clock: cfg.clock, Journal: cfg.journal.For(journal.SourcePLEG)}
	if cfg.metrics != nil {
		genericCfg.OnRelist = cfg.metrics.ObserveRelist
	}
	generic, err := pleg.New(genericCfg)
	if err != nil {
		return nil, err
	}
	if !cfg.evented {
		return generic, nil
	}
	evented, err := pleg.NewEvented(pleg.EventedConfig{Generic: generic, Events: cfg.cri, Journal: cfg.journal.For(journal.SourcePLEG)})
	if err != nil {
		return nil, err
	}
	return evented, nil
}

package kubelet

import (
	"context"
	"errors"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/bootstrap"
	"github.com/minikubelet/minikubelet/pkg/lease"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
	"github.com/minikubelet/minikubelet/pkg/server"
)

// Config holds the components the Kubelet runs; cmd/minikubelet/app builds them.
type Config struct {
	NodeStatus *nodestatus.Manager     // required
	Lease      *lease.Controller       // required
	Rotator    *bootstrap.Rotator      // optional: nil when rotateCertificates is off
	Recorder   record.EventRecorder    // required
	NodeRef    *corev1.ObjectReference // the node, for events; required
	// Pods configures the pod lifecycle (PLEG, pod workers, status manager, pod sources,
	// syncLoop). nil runs a node without pods.
	Pods *PodConfig
	// Server configures the kubelet API on :10250 (exec, logs, port-forward, /pods, /metrics);
	// the Kubelet fills in its Host. Used only with Pods; nil serves nothing.
	Server *server.Config
}

// Kubelet is minikubelet's main object.
type Kubelet struct {
	cfg  Config
	pods *pods // nil without Config.Pods
}

// New checks that every required component is there.
func New(cfg Config) (*Kubelet, error) {
	if cfg.NodeStatus == nil || cfg.Lease == nil || cfg.Recorder == nil || cfg.NodeRef == nil {
		return nil, errors.New("kubelet: NodeStatus, Lease, Recorder and NodeRef are required")
	}
	k := &Kubelet{cfg: cfg}
	if cfg.Pods != nil {
		p, err := newPods(*cfg.Pods, cfg.Recorder)
		if err != nil {
			return nil, err
		}
		k.pods = p
		if cfg.Server != nil {
			sc := *cfg.Server
			sc.Host = p
			if p.server, err = server.New(sc); err != nil {
				return nil, err
			}
		}
		// The node is Ready only while PLEG keeps relisting (upstream: "PLEG is not healthy").
		cfg.NodeStatus.AddReadinessCheck(nodestatus.ReadinessCheck{Name: "PLEG", Check: func() error {
			_, err := p.pleg.Healthy()
			return err
		}})
	}
	return k, nil
}

// Run starts every loop in order and blocks until ctx is cancelled and all loops have returned.
func (k *Kubelet) Run(parent context.Context) error {
	logger := klog.FromContext(parent)
	// A component that cannot go on (the kubelet API cannot listen) stops the whole kubelet with
	// its error, as upstream exits; a clean shutdown is the parent's cancellation.
	ctx, fail := context.WithCancelCause(parent)
	var wg sync.WaitGroup
	defer wg.Wait() // runs last: after fail(nil) below has stopped every loop
	defer fail(nil)
	goLoop := func(name string, loop func(context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(klog.NewContext(ctx, logger.WithName(name)))
		}()
	}

	// 1. Client certificate rotation: runs from the start, independent of everything else.
	if k.cfg.Rotator != nil {
		goLoop("certificate-rotation", k.cfg.Rotator.Run)
	}
	k.cfg.Recorder.Eventf(k.cfg.NodeRef, corev1.EventTypeNormal, "Starting", "Starting minikubelet.")
	// 2. Node registration: the Node must exist before its Lease (owner reference) and status.
	if err := k.cfg.NodeStatus.Register(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop while still registering
		}
		return err
	}
	// 3. Lease heartbeat, every nodeLeaseDurationSeconds/4.
	goLoop("lease", k.cfg.Lease.Run)
	// 4. Node status, computed every nodeStatusUpdateFrequency, reported on change or every 5 min.
	goLoop("nodestatus", k.cfg.NodeStatus.Run)

	logger.Info("minikubelet is running")
	// 5. The pod lifecycle: pod cache and PLEG → status manager → pod workers → pod sources →
	// syncLoop, which runs until ctx ends.
	if k.pods != nil {
		if err := k.pods.run(ctx, goLoop, fail); err != nil {
			return err
		}
	} else {
		<-ctx.Done()
	}
	logger.Info("Shutting down")
	if parent.Err() == nil {
		return context.Cause(ctx) // a component failed
	}
	return nil
}

package kubelet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// What the node agents of one `minikubelet --nodes N` process share (cmd/minikubelet/app
// nodes.go makes a Shared and hands it to each Kubelet). Nothing here carries a node's identity
// to the API server except the Service informer, a read any node may do:
//
//   - one gRPC server and socket for every node's fake runtime (SharedConfig.FakeRuntimes), and one connection to
//     it; each node still has a Runtime of its own, and its calls name it;
//   - one Service informer (service-link env), started with the client of the first node that
//     gets there: a read any node may make. (Not the Node informer: the Node authorizer lets a
//     node read only its own Node, so each keeps its own, on metadata.name=<node>.)
//   - the start-up pace: at most StartConcurrency nodes between TLS bootstrap and registration,
//     so a thousand CSRs and Node creations do not all hit the control plane at once.
//
// Everything else stays per node: client certificate, API clients and their connections,
// Lease, node status and its Node informer, pod sources, PLEG, pod workers, status manager,
// prober, Events, kubelet API.

// SharedConfig is what NewShared needs.
type SharedConfig struct {
	// FakeRuntimes serves every node's built-in runtime on one socket (cmd/minikubelet passes
	// the fake runtime's Mux). Required.
	FakeRuntimes RuntimeMux
	// Nodes is how many node agents will start, for the start-up progress.
	Nodes int
	// StartConcurrency is how many nodes may be between TLS bootstrap and registration at once.
	StartConcurrency int
	// RuntimeRequestTimeout bounds each CRI call (runtimeRequestTimeout).
	RuntimeRequestTimeout time.Duration
	// Clock times the start-up progress; nil is the real clock.
	Clock clock.WithTicker
}

// RuntimeMux is the built-in runtimes of --nodes behind one socket and gRPC server: each call
// names its node in the gRPC metadata NodeKey, and goes to that node's runtime.
type RuntimeMux interface {
	RuntimeServer
	// NewRuntime adds node's runtime, with pod IPs from podCIDR; the kubelet serves its
	// streaming server (exec, attach, port-forward) as a RuntimeServer of its own.
	NewRuntime(node, podCIDR string) (RuntimeServer, error)
	// NodeKey is the gRPC metadata key whose value names the node of a call.
	NodeKey() string
}

// Shared is what the node agents of one process share; see above.
type Shared struct {
	cfg SharedConfig
	cri *grpc.ClientConn // to cfg.FakeRuntimes, made by Run

	ready chan struct{} // closed once Run serves fakeRuntimes and cri is made

	ctx       context.Context // Run's: the Service informer lives as long
	mu        sync.Mutex
	services  *services
	stopping  bool
	informers sync.WaitGroup

	turns                    chan struct{} // a slot per node between bootstrap and registration
	bootstrapped, registered atomic.Int64
}

// NewShared prepares what the nodes share; Run serves it.
func NewShared(cfg SharedConfig) (*Shared, error) {
	if cfg.FakeRuntimes == nil {
		return nil, errors.New("kubelet: SharedConfig.FakeRuntimes is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Shared{cfg: cfg, ready: make(chan struct{}), turns: make(chan struct{}, max(1, cfg.StartConcurrency))}, nil
}

// Ready is closed once the nodes may start.
func (s *Shared) Ready() <-chan struct{} { return s.ready }

// Run serves the fake runtimes, runs the Service informer once a node has started it, and logs
// the start-up's progress, until ctx ends — after every node has stopped.
func (s *Shared) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	served := make(chan error, 1)
	go func() { served <- s.cfg.FakeRuntimes.Serve(ctx) }()
	select {
	case <-s.cfg.FakeRuntimes.Ready():
	case err := <-served:
		return err
	}
	conn, err := remote.DialConn(s.cfg.FakeRuntimes.Endpoint(), s.cfg.RuntimeRequestTimeout)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	s.cri, s.ctx = conn, ctx
	close(s.ready)

	var wg sync.WaitGroup
	wg.Go(func() { s.reportProgress(ctx, logger) })
	err = <-served
	s.mu.Lock()
	s.stopping = true // no informer may start now
	s.mu.Unlock()
	s.informers.Wait()
	wg.Wait()
	return err
}

// reportProgress logs how many nodes have their certificate and their Node, every 5 s until all
// do: the CSR and registration rates the control plane sees.
func (s *Shared) reportProgress(ctx context.Context, logger klog.Logger) {
	start := s.cfg.Clock.Now()
	ticker := s.cfg.Clock.NewTicker(5 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
		b, r := s.bootstrapped.Load(), s.registered.Load()
		secs := s.cfg.Clock.Since(start).Seconds()
		perSecond := func(n int64) float64 { return float64(int(10*float64(n)/secs)) / 10 } // one decimal
		logger.Info("Starting node agents", "bootstrapped", b, "registered", r, "of", s.cfg.Nodes,
			"certificatesPerSecond", perSecond(b), "registrationsPerSecond", perSecond(r))
		if int(r) >= s.cfg.Nodes {
			return
		}
	}
}

// sharedServices returns the one Service informer, started by the first caller with its client;
// nil once the process is stopping.
func (s *Shared) sharedServices(client kubernetes.Interface) *services {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.services == nil && !s.stopping {
		var run component
		s.services, run = newServiceInformer(client)
		s.informers.Go(func() { _ = run.Run(s.ctx) })
	}
	return s.services
}

// turn is one node's place in the start-up pace; nil is no pace (a kubelet alone).
type turn struct {
	once   sync.Once
	shared *Shared
}

// waitTurn blocks until fewer than StartConcurrency nodes are between TLS bootstrap and
// registration, or ctx ends. Without a Shared it returns at once.
func (s *Shared) waitTurn(ctx context.Context) (*turn, error) {
	if s == nil {
		return nil, nil
	}
	select {
	case s.turns <- struct{}{}:
		return &turn{shared: s}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// done gives the turn back; it may be called again, and on nil.
func (t *turn) done() {
	if t != nil {
		t.once.Do(func() { <-t.shared.turns })
	}
}

// countBootstrapped and countRegistered count for the start-up progress; nil counts nothing.
func (s *Shared) countBootstrapped() {
	if s != nil {
		s.bootstrapped.Add(1)
	}
}

func (s *Shared) countRegistered() {
	if s != nil {
		s.registered.Add(1)
	}
}

package kubelet

import (
	"context"
	"errors"
	"net"

	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/bootstrap"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/journal"
	"github.com/minikubelet/minikubelet/pkg/metrics"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/stats"
)

// Config is what a Kubelet is made from.
type Config struct {
	// Options are the validated flags and KubeletConfiguration (pkg/options). Required.
	Options *options.Options
	// APIListener, when set, is where the kubelet API serves instead of listening on
	// --address:--port (--nodes opens one on an ephemeral port for each node agent).
	APIListener net.Listener
	// Clock drives every step's timing record; nil is the real clock.
	Clock clock.WithTicker
	// Shared, with --nodes, is what this node agent shares with the others of the process
	// (shared.go): the fake runtimes' server, the Service informer, the start-up pace. Its Ready
	// must be closed. nil: a kubelet alone.
	Shared *Shared
}

// Kubelet is minikubelet's main object: one node agent. New prepares it; Run starts its steps in
// the start order and stops them in reverse.
type Kubelet struct {
	opts        *options.Options
	apiListener net.Listener
	clock       clock.WithTicker
	shared      *Shared // --nodes; nil alone
	turn        *turn   // held from TLS bootstrap to registration with --nodes (shared.go)
	nodeIP      net.IP
	machine     nodestatus.Machine // the host's size and identity, read once: admission, stats and node status share it
	journal     *journal.Journal   // "what just happened?": served on :10250/debug/journal
	metrics     *metrics.Registry  // served on :10250/metrics

	// Made by the steps, in start order.
	restConfig      *rest.Config                // tls-bootstrap: the client certificate's kubeconfig
	transport       *clientTransport            // api-clients: the client certificate and the dialer, renewed on rotation (transport.go)
	client          kubernetes.Interface        // api-clients: rate-limited by kubeAPIQPS/Burst
	heartbeatClient kubernetes.Interface        // api-clients: Lease and node status, timeout ≤ the lease
	eventClient     typedcorev1.CoreV1Interface // api-clients: Events, rate-limited by eventRecordQPS/eventBurst
	recorder        record.EventRecorder        // events
	runtimeEndpoint string                      // fake-runtime: the built-in runtime's socket, when it runs
	cri             *remote.Client              // cri
	services        *services                   // service-informer: the Services, for service-link env
	pods            *pods                       // pod-lifecycle
	stats           *stats.Provider             // stats: /stats/summary, /metrics/resource, eviction signals
	status          *nodestatus.Manager         // node-registration
	serving         *bootstrap.ServingCert      // serving-certificate: nil without serverTLSBootstrap
}

// New checks the options and prepares a Kubelet; nothing starts until Run.
func New(cfg Config) (*Kubelet, error) {
	o := cfg.Options
	if o == nil {
		return nil, errors.New("kubelet: Options are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	nodeIP := net.ParseIP(o.NodeIP)
	if nodeIP == nil {
		var err error
		if nodeIP, err = nodestatus.DetectNodeIP(o.NodeName); err != nil {
			return nil, err
		}
	}
	return &Kubelet{
		opts:        o,
		apiListener: cfg.APIListener,
		clock:       cfg.Clock,
		shared:      cfg.Shared,
		nodeIP:      nodeIP,
		machine:     nodestatus.ReadMachine(o.RootDir),
		journal:     journal.NewWithClock(journal.DefaultSize, cfg.Clock),
		metrics:     metrics.New(),
	}, nil
}

// startOrder is the kubelet's start order, one step a line (upstream spreads it over
// cmd/kubelet/app/server.go RunKubelet and pkg/kubelet/kubelet.go Run). Each step runs once, in
// this order; what it leaves running is stopped in reverse order when the kubelet stops, so a
// component always stops before the ones it uses. docs/architecture.md shows the same list.
func (k *Kubelet) startOrder() []step {
	return []step{
		{"root-dir", k.makeRootDir},                        // --root-dir holds everything we write
		{"debug-listener", k.startDebugListener},           // --debug-address: the journal on loopback, from the first step on
		{"tls-bootstrap", k.bootstrapClientCert},           // reuse the client certificate, or get one with the bootstrap token
		{"api-clients", k.makeClients},                     // main and heartbeat clients, through one rotating dialer
		{"events", k.startEvents},                          // core/v1 Events, source kubelet on this host
		{"certificate-rotation", k.startCertRotation},      // rotateCertificates: a new client certificate before this one expires
		{"fake-runtime", k.startFakeRuntime},               // the built-in CRI runtime, unless --container-runtime-endpoint
		{"cri", k.dialRuntime},                             // the CRI gRPC connection to the runtime
		{"service-informer", k.startServiceInformer},       // list and watch Services: containers' service-link env
		{"pod-lifecycle", k.makePodLifecycle},              // secret managers, kuberuntime, pod cache, PLEG, status manager, pod sources
		{"stats", k.makeStats},                             // the stats provider: pods' usage from CRI, the node's from the machine (or made up on the fake runtime)
		{"serving-certificate", k.startServingCertificate}, // serverTLSBootstrap: the kubelet API's certificate from a CSR
		{"kubelet-api", k.startServer},                     // HTTPS :10250 with authn/authz: exec, logs, /pods, /metrics
		{"node-registration", k.registerNode},              // the Node object (retries until it exists)
		{"lease", k.startLease},                            // the Lease heartbeat, renewed every nodeLeaseDurationSeconds/4
		{"lease-keeper", k.startLeaseKeeper},               // --debug-keepalive: a child renews the Lease while a debugger holds us
		{"node-status", k.startNodeStatus},                 // node status every nodeStatusUpdateFrequency
		{"pod-workers", k.startPodWorkers},                 // one goroutine per pod, idle until a pod arrives
		{"pleg", k.startPLEG},                              // relist the runtime every second into the pod cache (EventedPLEG: its events, relist every 5 min)
		{"status-manager", k.startStatusManager},           // pods/status PATCHes
		{"prober", k.startProber},                          // liveness, readiness and startup probe workers
		{"eviction", k.startEviction},                      // the eviction manager: pressure conditions, evictions every 10 s, admission under pressure
		{"pod-sources", k.startPodSources},                 // pods with spec.nodeName = us, and static manifests
		{"syncloop", k.startSyncLoop},                      // the main loop: everything above meets here
	}
}

// Run runs the start order and blocks until ctx ends (nil: a clean shutdown) or a step fails (its
// error, named by the step); every step is stopped, in reverse order, before it returns.
func (k *Kubelet) Run(ctx context.Context) error {
	defer k.turn.done() // a node that stopped before it registered gives its turn back
	return runSteps(ctx, k.startOrder(), k.journal.For(journal.SourceStart), k.clock)
}

// nop is the result of a step that has nothing to do with these options.
func nop() (component, error) { return nil, nil }

package kubelet

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/bootstrap"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/metrics"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/server"
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
	// FakeRuntime makes the built-in CRI runtime a kubelet alone serves when
	// --container-runtime-endpoint is empty (cri.go); cmd/minikubelet passes the fake runtime's.
	// nil: a runtime endpoint is required.
	FakeRuntime NewRuntimeServer
}

// Kubelet is minikubelet's main object: one node agent. New prepares it; Run starts its steps in
// the start order and stops them in reverse. As upstream's Kubelet, it runs the syncLoop
// (syncloop.go), handles the pods it is given (pod_handlers.go, housekeeping.go) and is what each
// pod worker calls (pod_sync.go).
type Kubelet struct {
	opts        *options.Options
	apiListener net.Listener
	clock       clock.WithTicker
	shared      *Shared // --nodes; nil alone
	// newFakeRuntime makes the built-in runtime (Config.FakeRuntime)
	newFakeRuntime NewRuntimeServer
	turn           *turn // held from TLS bootstrap to registration with --nodes (shared.go)
	nodeIP         net.IP
	machine        nodestatus.Machine // the host's size and identity, read once: admission, stats and node status share it
	journal        *journal.Journal   // "what just happened?": served on :10250/debug/journal
	metrics        *metrics.Registry  // served on :10250/metrics

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
	podLifecycle                                // pod-lifecycle: every field at once, started by the steps after it (pod_lifecycle.go)
	stats           *stats.Provider             // stats: /stats/summary, /metrics/resource, eviction signals
	serving         *bootstrap.ServingCert      // serving-certificate: nil without serverTLSBootstrap
	status          *nodestatus.Manager         // node-registration
	// evictionAdmit is the eviction manager's admission (the eviction step, before the pod
	// sources start); nil admits every pod.
	evictionAdmit func(pod *corev1.Pod) (bool, string)

	// What the pod workers' syncs and the eviction manager learn about pods, read when a pod's
	// status is computed; guarded by reasonsMu.
	reasonsMu sync.Mutex
	reasons   map[types.UID]map[string]kuberuntime.ContainerError // why containers wait, per pod
	evicted   map[types.UID]*podEviction                          // pods the eviction manager evicted
	// resizePending: the PodResizePending condition of pods whose resize waits (pod_resize.go).
	resizePending map[types.UID]*corev1.PodCondition
	// resizeInProgress: the PodResizeInProgress condition of pods whose allocated resize the
	// runtime has not applied yet, or failed to (pod_resize_status.go).
	resizeInProgress map[types.UID]*corev1.PodCondition
	// allocation: what each admitted pod was given, checkpointed under --root-dir (pod_resize.go).
	allocation *allocations
	// admitMu serialises every decision that fits a pod's resources beside the other pods' —
	// admission (syncLoop) and resizes (pod workers) — so two cannot both take the same free
	// capacity (upstream: the allocation manager's allocationMutex).
	admitMu sync.Mutex
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
		opts:             o,
		apiListener:      cfg.APIListener,
		clock:            cfg.Clock,
		shared:           cfg.Shared,
		newFakeRuntime:   cfg.FakeRuntime,
		nodeIP:           nodeIP,
		machine:          nodestatus.ReadMachine(o.RootDir),
		journal:          journal.NewWithClock(journal.DefaultSize, cfg.Clock),
		metrics:          metrics.New(),
		reasons:          map[types.UID]map[string]kuberuntime.ContainerError{},
		evicted:          map[types.UID]*podEviction{},
		resizePending:    map[types.UID]*corev1.PodCondition{},
		resizeInProgress: map[types.UID]*corev1.PodCondition{},
		allocation:       &allocations{path: filepath.Join(o.RootDir, allocationFile)},
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
		{"pod-lifecycle", k.makePodLifecycle},              // secret managers, kuberuntime, pod cache, PLEG, status manager, pod workers, prober, pod sources: made, not started
		{"stats", k.makeStats},                             // the stats provider: pods' usage from CRI, the node's from the machine (or made up on the fake runtime); the volume stats loop
		{"serving-certificate", k.startServingCertificate}, // serverTLSBootstrap: the kubelet API's certificate from a CSR
		{"kubelet-api", k.startServer},                     // HTTPS :10250 with authn/authz: exec, logs, /pods, /metrics
		{"node-status-object", k.makeNodeStatus},           // the node's status (made, not sent) and the Starting event
		{"volume-manager", k.startVolumeManager},           // desired and actual state of world: the reconciler sets up and tears down pods' volumes
		{"pod-workers", k.startPodWorkers},                 // one goroutine per pod, from the first update of each
		{"pleg", k.startPLEG},                              // relist the runtime every second into the pod cache (EventedPLEG: its events, relist every 5 min)
		{"status-manager", k.startStatusManager},           // pods/status PATCHes
		{"prober", k.startProber},                          // liveness, readiness and startup probe workers
		{"eviction", k.startEviction},                      // the eviction manager: pressure conditions, evictions every 10 s, admission under pressure
		{"pod-sources", k.startPodSources},                 // pods with spec.nodeName = us, and static manifests
		{"syncloop", k.startSyncLoop},                      // the main loop: everything above meets here
		{"healthz", k.startHealthz},                        // healthzBindAddress:healthzPort: plain-HTTP /healthz (kubeadm polls 127.0.0.1:10248)
		{"node-registration", k.registerNode},              // the Node object (retries until it exists)
		{"plugin-manager", k.startPluginManager},           // CSI drivers in <root-dir>/plugins_registry: registered, CSINode kept
		{"lease", k.startLease},                            // the Lease heartbeat, renewed every nodeLeaseDurationSeconds/4
		{"lease-keeper", k.startLeaseKeeper},               // --debug-keepalive: a child renews the Lease while a debugger holds us
		{"node-status", k.startNodeStatus},                 // node status every nodeStatusUpdateFrequency
	}
}

// The steps that start what pod-lifecycle made (pod_lifecycle.go), and the journal's listener.

// startDebugListener serves the journal without authentication on the loopback --debug-address
// (`minikubelet journal` reads it). It starts before the steps that record, so a student can
// follow the start itself.
func (k *Kubelet) startDebugListener(context.Context) (component, error) {
	if k.opts.DebugAddress == "" {
		return nop()
	}
	debug, err := journal.ListenDebug(k.opts.DebugAddress, k.journal)
	if err != nil {
		return nil, err // it names the address and the flag
	}
	return runFunc(debug.Serve), nil
}

// startHealthz serves /healthz on its own plain-HTTP listener once everything else runs, as
// upstream starts it after RunKubelet; healthzPort 0 turns it off.
func (k *Kubelet) startHealthz(context.Context) (component, error) {
	cfg := &k.opts.Config
	return server.Healthz{Address: cfg.HealthzBindAddress, Port: *cfg.HealthzPort, Clock: k.clock}, nil
}

// startVolumeManager runs the volume manager's populator and reconciler: SyncPod waits in
// WaitForAttachAndMount until they have set up a pod's volumes.
func (k *Kubelet) startVolumeManager(context.Context) (component, error) {
	return loop(k.volumeManager.Run), nil
}

// startPluginManager watches <root-dir>/plugins_registry for CSI drivers and keeps the CSINode,
// once the Node exists (upstream starts its plugin manager after registering the node).
func (k *Kubelet) startPluginManager(context.Context) (component, error) {
	return k.csi, nil
}

// startPodWorkers lets the pod workers run; they go before the status manager, which asks them
// whether a deleted pod's containers have all stopped. Stopping the step waits for every worker
// goroutine.
func (k *Kubelet) startPodWorkers(context.Context) (component, error) {
	return loop(k.podWorkers.Run), nil
}

// startPLEG relists the runtime every second into the pod cache and tells the syncLoop what
// changed; with EventedPLEG it follows the runtime's container events and relists every 5 min.
func (k *Kubelet) startPLEG(context.Context) (component, error) { return loop(k.pleg.Run), nil }

// startStatusManager writes pods/status and finishes graceful deletions.
func (k *Kubelet) startStatusManager(context.Context) (component, error) {
	return loop(k.statusManager.Run), nil
}

// startProber runs the probe workers, one per container and probe kind.
func (k *Kubelet) startProber(context.Context) (component, error) {
	return loop(k.probes.manager.Run), nil
}

// startPodSources watches the API server's pods with spec.nodeName = us, and reads the static
// pod manifests; both feed the syncLoop's configCh.
func (k *Kubelet) startPodSources(context.Context) (component, error) {
	return loop(k.podSources.Run), nil
}

// startSyncLoop runs the syncLoop (syncloop.go), where everything above meets, until the
// kubelet stops.
func (k *Kubelet) startSyncLoop(ctx context.Context) (component, error) {
	k.dns.CheckLimitsForResolvConf(ctx) // as upstream's syncLoop does before its first turn
	return loop(k.syncLoop), nil
}

// Run runs the start order and blocks until ctx ends (nil: a clean shutdown) or a step fails (its
// error, named by the step); every step is stopped, in reverse order, before it returns.
func (k *Kubelet) Run(ctx context.Context) error {
	defer k.turn.done() // a node that stopped before it registered gives its turn back
	return runSteps(ctx, k.startOrder(), k.journal.For(journal.SourceStart), k.clock)
}

// nop is the result of a step that has nothing to do with these options.
func nop() (component, error) { return nil, nil }

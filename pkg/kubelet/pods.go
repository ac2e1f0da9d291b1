package kubelet

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/journal"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/metrics"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/pleg"
	"github.com/minikubelet/minikubelet/pkg/podmanager"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/prober"
	"github.com/minikubelet/minikubelet/pkg/secretmanager"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
	"github.com/minikubelet/minikubelet/pkg/token"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// PodConfig is what the pod lifecycle needs; the Kubelet builds its components from it.
type PodConfig struct {
	Client      kubernetes.Interface            // required
	NodeName    string                          // required
	NodeIP      string                          // required: hostIP of every pod, podIP of host-network pods
	Runtime     *kuberuntime.Manager            // required
	CRI         runtimeapi.RuntimeServiceClient // required: exec probes run through its ExecSync
	RuntimeName string                          // containerID prefix, e.g. "minikubelet-fake"
	ManifestDir string                          // static pods; "" disables the file source
	// RootDir holds pod volumes: <root>/pods/<uid>/volumes/<plugin>/<name>. Required.
	RootDir string
	// CgroupRoot is where a real runtime makes the pods' cgroups (/sys/fs/cgroup), for
	// housekeeping to remove those of pods that are gone; "" for the fake runtime, which makes none.
	CgroupRoot string
	// PodLogsDir is where container logs are (--pod-logs-dir), for `kubectl logs`.
	PodLogsDir string
	// Secrets serves Secrets and ConfigMaps to env and volumes (Get, Cache or Watch). Required.
	Secrets secretmanager.Manager
	// Services are the cluster's Services, for the containers' service-link env; nil: none.
	Services *services
	// Allocatable is the node's allocatable (pods included), what admission fits pods in and the
	// default of a limit a container does not set when a resourceFieldRef reads it;
	// ClusterDomain the domain of pods' FQDNs in /etc/hosts.
	Allocatable   corev1.ResourceList
	ClusterDomain string
	// SyncFrequency is how often every pod is synced even without events (syncFrequency, 1 min);
	// FileCheckFrequency how often the manifest dir is re-read (20 s).
	SyncFrequency      time.Duration
	FileCheckFrequency time.Duration
	// EventedPLEG is the feature gate: PLEG follows the runtime's container events, and relists
	// only as a safety net while they flow (pleg.go).
	EventedPLEG bool
	// Metrics receives PLEG, pod worker and running-pod observations. Optional.
	Metrics *metrics.Registry
	// Journal records what the syncLoop, pod workers, PLEG and status manager do. Optional.
	Journal *journal.Journal
	Clock   clock.WithTicker
}

// pods is the pod lifecycle: every component of the course chapters PLEG, PodManager,
// PodWorkers and statusManager, and the syncLoop that drives them.
type pods struct {
	cfg     PodConfig
	cache   *pleg.Cache
	pleg    podLifecycleEventGenerator // generic, or evented with the EventedPLEG gate
	sources *podsource.Sources
	manager *podmanager.Manager
	status  *statusmanager.Manager
	workers *podworkers.PodWorkers // made by the pod-workers step: its goroutines live as long as that step
	helper  *runtimeHelper         // env and volumes
	probes  *probes                // liveness, readiness and startup probes and their results
	// recorder records the pod Events the kubelet itself decides (DeadlineExceeded).
	recorder record.EventRecorder
	// syncLoopJournal records each channel of the syncLoop that fires.
	syncLoopJournal journal.Recorder
	reasonsMu       sync.Mutex
	reasons         map[types.UID]map[string]kuberuntime.ContainerError // why containers wait, per pod
	evicted         map[types.UID]*podEviction                          // pods the eviction manager evicted (under reasonsMu)
	// evictionAdmit is the eviction manager's admission (set by the eviction step, before the pod
	// sources start); nil admits every pod.
	evictionAdmit func(pod *corev1.Pod) (bool, string)
}

// What the pod lifecycle's parts ask of each other, checked at compile time: the pods sync for
// the pod workers, which read the PLEG's cache; the pod manager answers the status manager.
var (
	_ podworkers.Syncer                 = (*pods)(nil)
	_ podworkers.Cache                  = (*pleg.Cache)(nil)
	_ statusmanager.MirrorPodTranslator = (*podmanager.Manager)(nil)
	_ statusmanager.PodGetter           = (*podmanager.Manager)(nil)
)

func newPods(cfg PodConfig, rec record.EventRecorder) (*pods, error) {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.NodeIP == "" || cfg.Runtime == nil || cfg.RootDir == "" || cfg.Secrets == nil {
		return nil, errors.New("kubelet: PodConfig needs Client, NodeName, NodeIP, Runtime, RootDir and Secrets")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.SyncFrequency == 0 {
		cfg.SyncFrequency = time.Minute
	}
	p := &pods{cfg: cfg, recorder: rec, reasons: map[types.UID]map[string]kuberuntime.ContainerError{}, evicted: map[types.UID]*podEviction{}}
	p.cache = pleg.NewCache(cfg.Clock)
	tokens, err := token.New(token.Config{Client: cfg.Client, Clock: cfg.Clock}) // service account tokens, as system:node:<name>
	if err != nil {
		return nil, err
	}
	projector, err := volume.New(volume.Config{RootDir: cfg.RootDir, GetSecret: cfg.Secrets.GetSecret, GetConfigMap: cfg.Secrets.GetConfigMap,
		GetServiceAccountToken: tokens.GetServiceAccountToken})
	if err != nil {
		return nil, err
	}
	p.helper = &runtimeHelper{secrets: cfg.Secrets, tokens: tokens, projector: projector, services: cfg.Services,
		hostIP: cfg.NodeIP, allocatable: cfg.Allocatable, clusterDomain: cfg.ClusterDomain, rootDir: cfg.RootDir,
		hostDirs: map[types.UID]map[string]string{}, mountBackoff: newMountBackoff(cfg.Clock)}
	cfg.Runtime.SetOptionsGenerator(p.helper)
	p.syncLoopJournal = cfg.Journal.For(journal.SourceSyncLoop)
	if p.pleg, err = newPLEG(plegConfig{runtime: cfg.Runtime, cri: cfg.CRI, cache: p.cache, clock: cfg.Clock,
		metrics: cfg.Metrics, journal: cfg.Journal, evented: cfg.EventedPLEG}); err != nil {
		return nil, err
	}
	if p.manager, err = podmanager.New(podmanager.Config{Client: cfg.Client, NodeName: cfg.NodeName}); err != nil {
		return nil, err
	}
	if p.status, err = statusmanager.New(statusmanager.Config{
		Client:            cfg.Client,
		Clock:             cfg.Clock,
		PodDeletionSafety: p.podResourcesReclaimed,
		MirrorPods:        p.manager,
		Pods:              p.manager,
		Journal:           cfg.Journal.For(journal.SourceStatus),
	}); err != nil {
		return nil, err
	}
	p.probes = &probes{liveness: prober.NewResultsManager(), readiness: prober.NewResultsManager(),
		startup: prober.NewResultsManager(), runtimeName: cfg.RuntimeName}
	if p.probes.manager, err = prober.New(prober.Config{
		Exec: execSync{runtime: cfg.CRI}, Status: p.status, Recorder: rec, Clock: cfg.Clock,
		Liveness: p.probes.liveness, Readiness: p.probes.readiness, Startup: p.probes.startup,
		Journal: cfg.Journal.For(journal.SourceProbe),
	}); err != nil {
		return nil, err
	}
	cfg.Runtime.SetProbeResults(p.probes)
	if p.sources, err = podsource.New(podsource.Config{
		Client: cfg.Client, NodeName: cfg.NodeName, ManifestDir: cfg.ManifestDir,
		FileCheckFrequency: cfg.FileCheckFrequency, Recorder: rec, Clock: cfg.Clock,
	}); err != nil {
		return nil, err
	}
	return p, nil
}

// podResourcesReclaimed tells the status manager a deleted pod may go from the API: its worker
// has stopped every container.
func (p *pods) podResourcesReclaimed(pod *corev1.Pod, _ corev1.PodStatus) bool {
	return !p.workers.CouldHaveRunningContainers(pod.UID)
}

// The pod lifecycle's steps (Kubelet.startOrder): made in one step, started in several.

// makePodLifecycle makes the pod lifecycle's parts, none running yet: the Secret and ConfigMap
// managers (configMapAndSecretChangeDetectionStrategy: Get, Cache or Watch), kuberuntime (pod
// specs into CRI calls), the pod cache and PLEG, the pod manager, the status manager and the pod
// sources.
func (k *Kubelet) makePodLifecycle(context.Context) (component, error) {
	o, cfg := k.opts, &k.opts.Config
	secrets, err := secretmanager.New(secretmanager.Config{
		Client:   k.client,
		Strategy: secretmanager.Strategy(cfg.ConfigMapAndSecretChangeDetectionStrategy),
		Resync:   cfg.SyncFrequency.Duration,
		Metrics:  k.metrics.CountObjectRequest,
		Journal:  k.journal.For(journal.SourceSecrets),
	})
	if err != nil {
		return nil, err
	}
	// What pkg/nodestatus will report: admission, the downward API's default limits and the
	// containers' oom_score_adj read it.
	capacity, allocatable, err := nodeResources(o, k.machine)
	if err != nil {
		return nil, err
	}
	runtimeManager, err := kuberuntime.New(kuberuntime.Config{Runtime: k.cri.Runtime, Image: k.cri.Image, PodLogsDir: cfg.PodLogsDir,
		Recorder: k.recorder, Journal: k.journal.For(journal.SourceCRI), MemoryCapacity: capacity.Memory().Value()})
	if err != nil {
		return nil, err
	}
	k.pods, err = newPods(PodConfig{
		Client:             k.client,
		NodeName:           o.NodeName,
		NodeIP:             k.nodeIP.String(),
		Runtime:            runtimeManager,
		CRI:                k.cri.Runtime,
		RuntimeName:        k.cri.Version().GetRuntimeName(),
		ManifestDir:        cfg.StaticPodPath,
		RootDir:            o.RootDir,
		CgroupRoot:         podCgroupRoot(o),
		PodLogsDir:         cfg.PodLogsDir,
		Secrets:            secrets,
		Services:           k.services,
		Allocatable:        allocatable,
		ClusterDomain:      cfg.ClusterDomain,
		SyncFrequency:      cfg.SyncFrequency.Duration,
		FileCheckFrequency: cfg.FileCheckFrequency.Duration,
		EventedPLEG:        options.FeatureEnabled(cfg, options.EventedPLEG),
		Metrics:            k.metrics,
		Journal:            k.journal,
		Clock:              k.clock,
	}, k.recorder)
	return nil, err
}

// podCgroupRoot is /sys/fs/cgroup with a real runtime, "" with the built-in fake one.
func podCgroupRoot(o *options.Options) string {
	if o.ContainerRuntimeEndpoint == "" {
		return ""
	}
	return "/sys/fs/cgroup"
}

// nodeResources are the capacity and allocatable the node reports (pkg/nodestatus): the
// machine's capacity with the --node-capacity overrides, less kubeReserved, systemReserved and
// evictionHard. Upstream reads the allocatable from its Node lister.
func nodeResources(o *options.Options, machine nodestatus.Machine) (capacity, allocatable corev1.ResourceList, err error) {
	return nodestatus.NodeResources(machine, o.Capacity, o.Config.MaxPods, o.NodeReserved)
}

// startPodWorkers makes the pod workers, idle until a pod arrives; they go before the status
// manager, which asks them whether a deleted pod's containers have all stopped. Stopping the
// step waits for every worker goroutine.
func (k *Kubelet) startPodWorkers(ctx context.Context) (component, error) {
	p := k.pods
	workersCfg := podworkers.Config{Syncer: p, Cache: p.cache, ResyncInterval: p.cfg.SyncFrequency, Clock: p.cfg.Clock,
		Journal: p.cfg.Journal.For(journal.SourcePodWorker)}
	if m := p.cfg.Metrics; m != nil {
		workersCfg.OnSync = func(t podworkers.UpdateType, d time.Duration) {
			m.PodWorkerDuration.WithLabelValues(t.String()).Observe(d.Seconds())
		}
	}
	workers, err := podworkers.New(ctx, workersCfg)
	if err != nil {
		return nil, err
	}
	p.workers = workers
	return onStop(func() error { workers.Wait(); return nil }), nil
}

// startPLEG relists the runtime every second into the pod cache and tells the syncLoop what
// changed; with EventedPLEG it follows the runtime's container events and relists every 5 min.
func (k *Kubelet) startPLEG(context.Context) (component, error) { return loop(k.pods.pleg.Run), nil }

// startStatusManager writes pods/status and finishes graceful deletions.
func (k *Kubelet) startStatusManager(context.Context) (component, error) {
	return loop(k.pods.status.Run), nil
}

// startProber runs the probe workers, one per container and probe kind.
func (k *Kubelet) startProber(context.Context) (component, error) {
	return loop(k.pods.probes.manager.Run), nil
}

// startPodSources watches the API server's pods with spec.nodeName = us, and reads the static
// pod manifests; both feed the syncLoop's configCh.
func (k *Kubelet) startPodSources(context.Context) (component, error) {
	return loop(k.pods.sources.Run), nil
}

// startSyncLoop runs the syncLoop, where everything above meets, until the kubelet stops.
func (k *Kubelet) startSyncLoop(context.Context) (component, error) {
	return loop(k.pods.syncLoop), nil
}

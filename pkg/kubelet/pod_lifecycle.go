package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/csi"
	"github.com/minikubelet/minikubelet/pkg/dns"
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
	"github.com/minikubelet/minikubelet/pkg/volumemanager"
)

// The pod-lifecycle step (upstream: the pod half of kubelet.go NewMainKubelet): it makes every
// component of the course chapters PLEG, PodManager, PodWorkers and statusManager at once, none
// running; the steps after it in startOrder only start them.

// podLifecycle is the pod lifecycle's components, as upstream's Kubelet holds them (kl.podManager,
// kl.podWorkers, …). The Kubelet embeds it as one value, which only the pod-lifecycle step
// assigns, every field at once: no component can be reached before the others it calls exist.
// Made is not started: a pod worker updated before the pod-workers step holds its update until
// podworkers.Run; PLEG, the status manager, the prober and the pod sources do nothing until their
// step runs them.
type podLifecycle struct {
	containerRuntime *kuberuntime.Manager  // pod specs into CRI calls
	runtimeName      string                // the runtime's name, the "<runtime>://" of container IDs
	secretManager    secretmanager.Manager // Secrets and ConfigMaps for env and volumes
	dns              *dns.Configurer       // each sandbox's DNS config: the pods' /etc/resolv.conf (dns.go)
	allocatable      corev1.ResourceList   // the node's allocatable: admission, the downward API's default limits
	podCache         *pleg.Cache           // the runtime's pod statuses, written by PLEG, read by the pod workers
	pleg             podLifecycleEventGenerator
	podManager       *podmanager.Manager    // the desired pods
	statusManager    *statusmanager.Manager // pods/status PATCHes
	podWorkers       *podworkers.PodWorkers // one goroutine per pod, calling SyncPod & co. (pod_sync.go)
	runtimeHelper    *runtimeHelper         // a container's env and mounts (volumes.go)
	volumeManager    *volumemanager.Manager // pods' volumes: desired and actual state of world, the reconciler
	csi              *csi.Manager           // CSI drivers registered in <root-dir>/plugins_registry, and their volumes
	tokens           *token.Manager         // service account tokens of projected volumes
	probes           *probes                // liveness, readiness and startup probes and their results
	podSources       *podsource.Sources     // the API server's pods for this node, static manifests
	syncLoopJournal  journal.Recorder       // each channel of the syncLoop that fires
}

// What the pod lifecycle's parts ask of each other, checked at compile time: the Kubelet syncs
// for the pod workers, which read the PLEG's cache; the pod manager answers the status manager.
var (
	_ podworkers.Syncer                 = (*Kubelet)(nil)
	_ podworkers.Cache                  = (*pleg.Cache)(nil)
	_ statusmanager.MirrorPodTranslator = (*podmanager.Manager)(nil)
	_ statusmanager.PodGetter           = (*podmanager.Manager)(nil)
)

// makePodLifecycle makes the pod lifecycle's components, none running yet: the Secret and
// ConfigMap managers (configMapAndSecretChangeDetectionStrategy: Get, Cache or Watch),
// kuberuntime, the pod cache and PLEG, the pod manager, the status manager, the pod workers,
// the prober and the pod sources.
func (k *Kubelet) makePodLifecycle(context.Context) (component, error) {
	lc, err := k.newPodLifecycle()
	if err != nil {
		return nil, err
	}
	k.podLifecycle = lc
	return nil, nil
}

// newPodLifecycle makes the components from what the steps before pod-lifecycle made: the
// clients, the Event recorder, the CRI connection and the Service informer.
func (k *Kubelet) newPodLifecycle() (podLifecycle, error) {
	o, cfg, clk := k.opts, &k.opts.Config, k.clock
	var lc podLifecycle
	var err error
	if lc.secretManager, err = secretmanager.New(secretmanager.Config{
		Client:   k.client,
		Strategy: secretmanager.Strategy(cfg.ConfigMapAndSecretChangeDetectionStrategy),
		Resync:   cfg.SyncFrequency.Duration,
		Metrics:  k.metrics.CountObjectRequest,
		Journal:  k.journal.For(journal.SourceSecrets),
	}); err != nil {
		return lc, err
	}
	// What pkg/nodestatus will report: admission, the downward API's default limits and the
	// containers' oom_score_adj read it.
	capacity, allocatable, err := nodeResources(o, k.machine)
	if err != nil {
		return lc, err
	}
	lc.allocatable, lc.runtimeName = allocatable, k.cri.Version().GetRuntimeName()
	lc.dns = k.newDNSConfigurer()
	if lc.containerRuntime, err = kuberuntime.New(kuberuntime.Config{Runtime: k.cri.Runtime, Image: k.cri.Image, PodLogsDir: cfg.PodLogsDir, DNS: lc.dns,
		Recorder: k.recorder, Journal: k.journal.For(journal.SourceCRI), MemoryCapacity: capacity.Memory().Value(), Clock: clk}); err != nil {
		return lc, err
	}
	if lc.tokens, err = token.New(token.Config{Client: k.client, Clock: clk}); err != nil { // service account tokens, as system:node:<name>
		return lc, err
	}
	lc.syncLoopJournal = k.journal.For(journal.SourceSyncLoop)
	lc.podCache = pleg.NewCache(clk)
	if lc.pleg, err = newPLEG(plegConfig{runtime: lc.containerRuntime, cri: k.cri.Runtime, cache: lc.podCache, clock: clk,
		metrics: k.metrics, journal: k.journal, evented: options.FeatureEnabled(cfg, options.EventedPLEG)}); err != nil {
		return lc, err
	}
	if lc.podManager, err = podmanager.New(podmanager.Config{Client: k.client, NodeName: o.NodeName}); err != nil {
		return lc, err
	}
	if lc.statusManager, err = statusmanager.New(statusmanager.Config{
		Client:            k.client,
		Clock:             clk,
		PodDeletionSafety: k.podResourcesReclaimed,
		MirrorPods:        lc.podManager,
		Pods:              lc.podManager,
		Journal:           k.journal.For(journal.SourceStatus),
	}); err != nil {
		return lc, err
	}
	if lc.podWorkers, err = newPodWorkers(k, lc.podCache, cfg.SyncFrequency.Duration, clk, k.metrics, k.journal); err != nil {
		return lc, err
	}
	if lc.volumeManager, lc.csi, err = k.newVolumeManager(lc); err != nil {
		return lc, err
	}
	lc.runtimeHelper = &runtimeHelper{secrets: lc.secretManager, volumes: lc.volumeManager, services: k.services,
		hostIP: k.nodeIP.String(), allocatable: allocatable, clusterDomain: cfg.ClusterDomain, rootDir: o.RootDir}
	lc.containerRuntime.SetOptionsGenerator(lc.runtimeHelper)
	lc.probes = &probes{liveness: prober.NewResultsManager(), readiness: prober.NewResultsManager(),
		startup: prober.NewResultsManager(), runtimeName: lc.runtimeName}
	if lc.probes.manager, err = prober.New(prober.Config{
		Exec: execSync{runtime: k.cri.Runtime}, Status: lc.statusManager, Recorder: k.recorder, Clock: clk,
		Liveness: lc.probes.liveness, Readiness: lc.probes.readiness, Startup: lc.probes.startup,
		Journal: k.journal.For(journal.SourceProbe),
	}); err != nil {
		return lc, err
	}
	lc.containerRuntime.SetProbeResults(lc.probes)
	lc.podSources, err = podsource.New(podsource.Config{
		Client: k.client, NodeName: o.NodeName, ManifestDir: cfg.StaticPodPath,
		FileCheckFrequency: cfg.FileCheckFrequency.Duration, Recorder: k.recorder, Clock: clk,
	})
	return lc, err
}

// newVolumeManager makes the volume manager over pkg/volume's writers: it reads the pod manager's
// pods, asks the pod workers where each pod is, and gets claims, volumes and the Node's labels
// as the node; CSI volumes go through pkg/csi, whose plugin watcher runs as its own step.
func (k *Kubelet) newVolumeManager(lc podLifecycle) (*volumemanager.Manager, *csi.Manager, error) {
	var mounter volume.Mounter // the fake runtime never touches host mounts: a medium Memory emptyDir is a directory
	if k.opts.ContainerRuntimeEndpoint != "" {
		mounter = volume.HostMounter{} // a real runtime: tmpfs in the mount namespace it shares with us
	}
	projector, err := volume.New(volume.Config{RootDir: k.opts.RootDir, GetSecret: lc.secretManager.GetSecret,
		GetConfigMap: lc.secretManager.GetConfigMap, GetServiceAccountToken: lc.tokens.GetServiceAccountToken,
		NodeAllocatable: lc.allocatable, Mounter: mounter, Clock: k.clock})
	if err != nil {
		return nil, nil, err
	}
	csiVolumes, err := csi.New(csi.Config{RootDir: k.opts.RootDir, NodeName: k.opts.NodeName, Client: k.client, Clock: k.clock})
	if err != nil {
		return nil, nil, err
	}
	vm, err := volumemanager.New(volumemanager.Config{
		RootDir: k.opts.RootDir, Projector: projector, Client: k.client, Pods: lc.podManager, CSI: csiVolumes,
		PodState: podVolumeState{workers: lc.podWorkers, pods: lc.podManager}, Recorder: k.recorder, Clock: k.clock,
		Journal: k.journal.For(journal.SourceVolume),
		NodeLabels: func(ctx context.Context) (map[string]string, error) {
			node, err := k.client.CoreV1().Nodes().Get(ctx, k.opts.NodeName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("get node %s for its labels: %w", k.opts.NodeName, err)
			}
			return node.Labels, nil
		},
	})
	return vm, csiVolumes, err
}

// newPodWorkers makes the pod workers, which call the Kubelet's syncs (pod_sync.go) and resync
// every pod each syncFrequency; they start no goroutine until the pod-workers step runs them.
func newPodWorkers(syncer podworkers.Syncer, cache *pleg.Cache, resync time.Duration, clk clock.Clock, m *metrics.Registry, j *journal.Journal) (*podworkers.PodWorkers, error) {
	cfg := podworkers.Config{Syncer: syncer, Cache: cache, ResyncInterval: resync, Clock: clk, Journal: j.For(journal.SourcePodWorker)}
	if m != nil {
		cfg.OnSync = func(t podworkers.UpdateType, d time.Duration) {
			m.PodWorkerDuration.WithLabelValues(t.String()).Observe(d.Seconds())
		}
	}
	return podworkers.New(cfg)
}

// podResourcesReclaimed tells the status manager a deleted pod may go from the API: its worker
// has stopped every container (upstream kubelet_pods.go PodCouldHaveRunningContainers).
func (k *Kubelet) podResourcesReclaimed(pod *corev1.Pod, _ corev1.PodStatus) bool {
	return !k.podWorkers.CouldHaveRunningContainers(pod.UID)
}

// podCgroupRoot is where a real runtime makes the pods' cgroups, /sys/fs/cgroup, for
// housekeeping to remove those of pods that are gone; "" with the built-in fake one, which makes
// none.
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

package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/journal"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/metrics"
	"github.com/minikubelet/minikubelet/pkg/pleg"
	"github.com/minikubelet/minikubelet/pkg/podmanager"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/secretmanager"
	"github.com/minikubelet/minikubelet/pkg/server"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// PodConfig is what the pod lifecycle needs; the Kubelet builds its components from it.
type PodConfig struct {
	Client      kubernetes.Interface // required
	NodeName    string               // required
	NodeIP      string               // required: hostIP of every pod, podIP of host-network pods
	Runtime     *kuberuntime.Manager // required
	RuntimeName string               // containerID prefix, e.g. "minikubelet-fake"
	ManifestDir string               // static pods; "" disables the file source
	MaxPods     int
	// RootDir holds pod volumes: <root>/pods/<uid>/volumes/<plugin>/<name>. Required.
	RootDir string
	// PodLogsDir is where container logs are (--pod-logs-dir), for `kubectl logs`.
	PodLogsDir string
	// Secrets serves Secrets and ConfigMaps to env and volumes (Get, Cache or Watch). Required.
	Secrets secretmanager.Manager
	// SyncFrequency is how often every pod is synced even without events (syncFrequency, 1 min);
	// FileCheckFrequency how often the manifest dir is re-read (20 s).
	SyncFrequency      time.Duration
	FileCheckFrequency time.Duration
	// ServerPort is the kubelet API's port, for messages.
	ServerPort int32
	// Metrics receives PLEG, pod worker and running-pod observations. Optional.
	Metrics *metrics.Registry
	// Journal records what the syncLoop, pod workers, PLEG and status manager do. Optional.
	Journal *journal.Journal
	Clock   clock.WithTicker
}

// pods is the pod lifecycle: every component of the course chapters PLEG, PodManager,
// PodWorkers and statusManager, and the syncLoop that drives them.
type pods struct {
	cfg       PodConfig
	cache     *pleg.Cache
	pleg      *pleg.GenericPLEG
	sources   *podsource.Sources
	manager   *podmanager.Manager
	status    *statusmanager.Manager
	workers   *podworkers.PodWorkers // created in run, before any loop starts: its goroutines live as long as ctx
	helper    *runtimeHelper         // env and volumes
	server    *server.Server         // the kubelet API on :10250; nil when not configured
	reasonsMu sync.Mutex
	reasons   map[types.UID]map[string]kuberuntime.ContainerError // why containers wait, per pod
}

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
	p := &pods{cfg: cfg, reasons: map[types.UID]map[string]kuberuntime.ContainerError{}}
	p.cache = pleg.NewCache(cfg.Clock)
	projector, err := volume.New(volume.Config{RootDir: cfg.RootDir, GetSecret: cfg.Secrets.GetSecret, GetConfigMap: cfg.Secrets.GetConfigMap})
	if err != nil {
		return nil, err
	}
	p.helper = &runtimeHelper{secrets: cfg.Secrets, projector: projector, hostIP: cfg.NodeIP, hostDirs: map[types.UID]map[string]string{}}
	cfg.Runtime.SetOptionsGenerator(p.helper)
	plegCfg := pleg.Config{Runtime: cfg.Runtime, Cache: p.cache, Clock: cfg.Clock, Journal: cfg.Journal}
	if cfg.Metrics != nil {
		plegCfg.OnRelist = cfg.Metrics.ObserveRelist
	}
	if p.pleg, err = pleg.New(plegCfg); err != nil {
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
		Journal:           cfg.Journal,
	}); err != nil {
		return nil, err
	}
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

// run starts the pod lifecycle in order — pod cache and PLEG, status manager, pod workers, pod
// sources — then runs the syncLoop until ctx ends.
func (p *pods) run(ctx context.Context, goLoop func(string, func(context.Context)), fail func(error)) error {
	// The pod workers exist first (idle until a pod arrives): the status manager asks them
	// whether a deleted pod's containers have all stopped.
	workersCfg := podworkers.Config{Syncer: p, Cache: p.cache, ResyncInterval: p.cfg.SyncFrequency, Clock: p.cfg.Clock, Journal: p.cfg.Journal}
	if m := p.cfg.Metrics; m != nil {
		workersCfg.OnSync = func(t podworkers.UpdateType, d time.Duration) {
			m.PodWorkerDuration.WithLabelValues(t.String()).Observe(d.Seconds())
		}
	}
	workers, err := podworkers.New(klog.NewContext(ctx, klog.FromContext(ctx).WithName("podworkers")), workersCfg)
	if err != nil {
		return err
	}
	p.workers = workers
	defer workers.Wait()
	// PLEG relists the runtime every second and fills the pod cache.
	goLoop("pleg", p.pleg.Run)
	// The status manager writes pods/status.
	goLoop("statusmanager", p.status.Run)
	// Pod sources: the API server (spec.nodeName = us) and the static manifests.
	goLoop("podsource", p.sources.Run)
	// The kubelet API (HTTPS :10250): exec, attach, port-forward, logs, /pods, /metrics.
	if p.server != nil {
		goLoop("server", func(ctx context.Context) {
			if err := p.server.Run(ctx); err != nil {
				fail(fmt.Errorf("kubelet API on :%d: %w (is another kubelet using the port? choose another with --port)", p.cfg.ServerPort, err))
			}
		})
	}
	// The syncLoop: everything above meets here.
	p.syncLoop(klog.NewContext(ctx, klog.FromContext(ctx).WithName("syncloop")))
	return nil
}

// syncLoop is the kubelet's main loop (upstream: kubelet.go syncLoop).
func (p *pods) syncLoop(ctx context.Context) {
	syncTicker := p.cfg.Clock.NewTicker(time.Second)
	defer syncTicker.Stop()
	housekeeping := p.cfg.Clock.NewTicker(2 * time.Second)
	defer housekeeping.Stop()
	for p.syncLoopIteration(ctx, p.sources.Updates(), p.pleg.Watch(), syncTicker.C(), housekeeping.C()) {
	}
}

// syncLoopIteration is one turn of the syncLoop: wait on every channel, act on the first that
// fires (upstream: kubelet.go syncLoopIteration). It returns false when the loop should end.
func (p *pods) syncLoopIteration(ctx context.Context, configCh <-chan podsource.PodUpdate, plegCh <-chan *pleg.PodLifecycleEvent,
	syncCh, housekeepingCh <-chan time.Time) bool {
	logger := klog.FromContext(ctx)
	select {
	case <-ctx.Done():
		return false
	case u, ok := <-configCh:
		if !ok {
			return false
		}
		logger.V(2).Info("SyncLoop pod update", "op", u.Op, "source", u.Source, "pods", klog.KObjSlice(u.Pods))
		for _, pod := range u.Pods {
			p.note("configCh "+u.Op.String(), pod, map[string]string{"source": u.Source})
		}
		switch u.Op {
		case podsource.ADD:
			p.handlePodAdditions(u.Pods)
		case podsource.UPDATE, podsource.DELETE:
			p.handlePodUpdates(u.Pods)
		case podsource.REMOVE:
			p.handlePodRemoves(u.Pods)
		case podsource.RECONCILE:
			for _, pod := range u.Pods {
				p.manager.UpdatePod(pod)
			}
		}
	case e := <-plegCh:
		logger.V(4).Info("SyncLoop PLEG event", "podUID", e.ID, "type", e.Type, "data", e.Data)
		pod, _ := p.manager.GetPodByUID(e.ID)
		p.note("plegCh", pod, map[string]string{"event": string(e.Type), "id": fmt.Sprint(e.Data)})
		if e.Type == pleg.ContainerRemoved {
			break
		}
		if pod, ok := p.manager.GetPodByUID(e.ID); ok {
			p.dispatch(pod, podworkers.SyncPodSync)
		}
	case <-syncCh:
		for _, pod := range p.workers.DuePods() {
			if current, ok := p.manager.GetPodByUID(pod.UID); ok {
				p.note("syncCh", current, nil)
				p.dispatch(current, podworkers.SyncPodSync)
			}
		}
	case <-housekeepingCh:
		var fields map[string]string
		if err := p.handlePodCleanups(ctx); err != nil {
			logger.Error(err, "Failed cleaning up pods")
			fields = map[string]string{"error": err.Error()}
		}
		p.note("housekeepingCh", nil, fields)
	}
	return true
}

// note records that a channel of the syncLoop fired, for pod (nil: for no single pod).
func (p *pods) note(kind string, pod *corev1.Pod, fields map[string]string) {
	e := journal.Event{Source: journal.SourceSyncLoop, Kind: kind, Fields: fields}
	if pod != nil {
		e.Pod, e.UID = journal.PodKey(pod.Namespace, pod.Name), string(pod.UID)
	}
	p.cfg.Journal.Record(e)
}

// dispatch hands a pod to its worker, with its mirror pod.
func (p *pods) dispatch(pod *corev1.Pod, t podworkers.UpdateType) {
	mirror, _ := p.manager.GetMirrorPodByPod(pod)
	p.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: t, Pod: pod, MirrorPod: mirror})
}

func (p *pods) handlePodAdditions(added []*corev1.Pod) {
	sort.Slice(added, func(i, j int) bool { return added[i].CreationTimestamp.Before(&added[j].CreationTimestamp) })
	for _, pod := range added {
		p.manager.AddPod(pod)
		if p.manager.IsMirrorPod(pod) {
			if static, ok := p.manager.GetPodByMirrorPod(pod); ok {
				p.dispatch(static, podworkers.SyncPodUpdate)
			}
			continue
		}
		// Pods already terminal or being deleted are not admitted again: they only need to stop.
		if pod.DeletionTimestamp == nil && !isTerminal(pod) {
			if msg, ok := p.admit(pod); !ok {
				p.reject(pod, "OutOfpods", msg)
				continue
			}
		}
		p.cfg.Secrets.RegisterPod(pod)
		p.dispatch(pod, podworkers.SyncPodCreate)
	}
}

func (p *pods) handlePodUpdates(updated []*corev1.Pod) {
	for _, pod := range updated {
		p.manager.UpdatePod(pod)
		if p.manager.IsMirrorPod(pod) {
			if static, ok := p.manager.GetPodByMirrorPod(pod); ok {
				p.dispatch(static, podworkers.SyncPodUpdate)
			}
			continue
		}
		if st, ok := p.workers.State(pod.UID); !ok || st == podworkers.Syncing {
			p.cfg.Secrets.RegisterPod(pod) // a terminated pod reads no Secrets any more
		}
		p.dispatch(pod, podworkers.SyncPodUpdate)
	}
}

func (p *pods) handlePodRemoves(removed []*corev1.Pod) {
	for _, pod := range removed {
		p.manager.RemovePod(pod)
		if p.manager.IsMirrorPod(pod) {
			if static, ok := p.manager.GetPodByMirrorPod(pod); ok {
				p.dispatch(static, podworkers.SyncPodUpdate) // recreates the mirror pod
			}
			continue
		}
		p.cfg.Secrets.UnregisterPod(pod)
		p.workers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod})
	}
}

// admit is the kubelet's admission: minikubelet checks only the pod count (maxPods), as the
// first of upstream's admit handlers does.
func (p *pods) admit(pod *corev1.Pod) (string, bool) {
	if p.cfg.MaxPods <= 0 {
		return "", true
	}
	active := 0
	for _, other := range p.manager.GetPods() {
		if other.UID == pod.UID || other.Status.Phase == corev1.PodSucceeded || other.Status.Phase == corev1.PodFailed {
			continue
		}
		if st, ok := p.workers.State(other.UID); ok && st == podworkers.Syncing {
			active++
		}
	}
	if active >= p.cfg.MaxPods {
		return fmt.Sprintf("Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, p.cfg.MaxPods), false
	}
	return "", true
}

// reject marks a pod the node will not run as Failed, as upstream's rejectPod.
func (p *pods) reject(pod *corev1.Pod, reason, message string) {
	st := pod.Status.DeepCopy()
	st.Phase, st.Reason, st.Message = corev1.PodFailed, reason, "Pod was rejected: "+message
	p.status.SetPodStatus(pod, *st)
}

// handlePodCleanups is housekeeping (upstream: kubelet_pods.go HandlePodCleanups): stop workers
// of pods no longer desired, forget their statuses, and remove from the runtime every pod that is
// neither desired nor handled by a worker.
func (p *pods) handlePodCleanups(ctx context.Context) error {
	if !p.sources.AllSourcesReady() {
		return nil // until every source has spoken, a running pod may just not have arrived yet
	}
	desired := map[types.UID]bool{}
	for _, pod := range p.manager.GetPods() {
		desired[pod.UID] = true
	}
	states, restart := p.workers.SyncKnownPods(desired)
	for _, uid := range restart {
		if pod, ok := p.manager.GetPodByUID(uid); ok {
			p.dispatch(pod, podworkers.SyncPodCreate)
		}
	}
	keep := map[types.UID]bool{}
	for uid := range desired {
		keep[uid] = true
	}
	for uid := range states {
		keep[uid] = true
	}
	p.status.RemoveOrphanedStatuses(keep)
	if m := p.cfg.Metrics; m != nil {
		m.PodWorkers.Set(float64(p.workers.Count()))
		m.StatusManagerEntries.Set(float64(p.status.Len()))
	}
	p.reasonsMu.Lock()
	for uid := range p.reasons {
		if !keep[uid] {
			delete(p.reasons, uid)
		}
	}
	p.reasonsMu.Unlock()

	runtimePods, err := p.cfg.Runtime.GetPods(ctx, true)
	if err != nil {
		return err
	}
	var errs []error
	for _, rp := range runtimePods {
		if keep[rp.ID] {
			continue
		}
		klog.FromContext(ctx).V(2).Info("Removing a pod that is no longer desired from the runtime", "pod", klog.KRef(rp.Namespace, rp.Name), "podUID", rp.ID)
		status, err := p.cfg.Runtime.GetPodStatus(ctx, rp.ID, rp.Name, rp.Namespace)
		if err == nil {
			err = p.cfg.Runtime.KillPod(ctx, status, 0)
		}
		if err == nil {
			err = p.cfg.Runtime.RemovePod(ctx, rp)
		}
		errs = append(errs, err)
	}
	if err := p.helper.cleanupVolumes(p.cfg.RootDir, keep); err != nil {
		errs = append(errs, err)
	}
	if err := cleanupPodLogDirs(p.cfg.PodLogsDir, keep); err != nil {
		errs = append(errs, err)
	}
	p.cfg.Runtime.GCBackoffs()
	for _, mirror := range p.manager.GetOrphanedMirrorPods() {
		uid := mirror.UID
		if _, err := p.manager.DeleteMirrorPod(ctx, mirror.Namespace, mirror.Name, &uid); err != nil {
			errs = append(errs, err)
		}
	}
	if m := p.cfg.Metrics; m != nil {
		m.RunningPods.Set(float64(countReadySandboxes(runtimePods)))
		m.RunningContainers.Set(float64(countRunningContainers(runtimePods)))
	}
	klog.FromContext(ctx).V(3).Info("Housekeeping", "podWorkers", p.workers.Count(), "statuses", p.status.Len(), "runtimePods", len(runtimePods))
	return errors.Join(errs...)
}

// cleanupPodLogDirs removes <pod-logs-dir>/<ns>_<name>_<uid> of pods not in keep.
func cleanupPodLogDirs(dir string, keep map[types.UID]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		i := strings.LastIndexByte(e.Name(), '_')
		if i < 0 || keep[types.UID(e.Name()[i+1:])] {
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

func countReadySandboxes(pods []*kubecontainer.RunningPod) int {
	n := 0
	for _, rp := range pods {
		for _, s := range rp.Sandboxes {
			if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
				n++
				break
			}
		}
	}
	return n
}

func countRunningContainers(pods []*kubecontainer.RunningPod) int {
	n := 0
	for _, rp := range pods {
		for _, c := range rp.Containers {
			if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
				n++
			}
		}
	}
	return n
}

// setReasons records why the pod's containers wait and reports whether that changed.
func (p *pods) setReasons(uid types.UID, errs map[string]kuberuntime.ContainerError) bool {
	p.reasonsMu.Lock()
	defer p.reasonsMu.Unlock()
	old := p.reasons[uid]
	p.reasons[uid] = errs
	return !reflect.DeepEqual(old, errs) && (len(old) > 0 || len(errs) > 0)
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func (p *pods) statusInputs(uid types.UID) statusInputs {
	p.reasonsMu.Lock()
	defer p.reasonsMu.Unlock()
	return statusInputs{nodeIP: p.cfg.NodeIP, runtimeName: p.cfg.RuntimeName, reasons: p.reasons[uid], now: p.cfg.Clock.Now()}
}

// SyncPod is a pod worker's sync of a running pod (upstream: kubelet.go SyncPod): publish the
// status the runtime shows, keep a static pod's mirror pod, and let kuberuntime start what
// should run.
func (p *pods) SyncPod(ctx context.Context, _ podworkers.UpdateType, pod, mirror *corev1.Pod, rs *kubecontainer.PodStatus) (bool, error) {
	apiStatus := generateAPIPodStatus(pod, rs, p.statusInputs(pod.UID))
	p.status.SetPodStatus(pod, apiStatus)
	if apiStatus.Phase == corev1.PodSucceeded || apiStatus.Phase == corev1.PodFailed {
		return true, nil
	}
	if podsource.IsStaticPod(pod) {
		p.ensureMirrorPod(ctx, pod, mirror)
	}
	// Volumes before containers: write (or refresh) every Secret/ConfigMap/projected volume.
	if err := p.helper.setUpVolumes(ctx, pod); err != nil {
		return false, err
	}
	result := p.cfg.Runtime.SyncPod(ctx, pod, rs)
	if result.Changed {
		p.pleg.RelistSoon() // the next sync sees the started containers now, not at the next tick
	}
	if p.setReasons(pod.UID, result.ContainerErrors) { // show changed waiting reasons now, not at the next sync
		p.status.SetPodStatus(pod, generateAPIPodStatus(pod, rs, p.statusInputs(pod.UID)))
	}
	return false, result.Err()
}

// ensureMirrorPod makes the API show a static pod: create its mirror pod, or replace an outdated one.
func (p *pods) ensureMirrorPod(ctx context.Context, pod, mirror *corev1.Pod) {
	logger := klog.FromContext(ctx)
	if mirror != nil && (mirror.DeletionTimestamp != nil || !podmanager.MirrorPodMatches(pod, mirror)) {
		uid := mirror.UID
		if _, err := p.manager.DeleteMirrorPod(ctx, mirror.Namespace, mirror.Name, &uid); err != nil {
			logger.Error(err, "Failed to delete an outdated mirror pod")
		}
		mirror = nil
	}
	if mirror == nil {
		if err := p.manager.CreateMirrorPod(ctx, pod); err != nil {
			logger.Error(err, "Failed to create the mirror pod")
		}
	}
}

// SyncTerminatingPod stops every container of the pod within its grace period, then publishes
// the terminal status (upstream: kubelet.go SyncTerminatingPod).
func (p *pods) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, rs *kubecontainer.PodStatus, grace int64) error {
	klog.FromContext(ctx).V(2).Info("Stopping pod", "pod", klog.KObj(pod), "gracePeriod", grace)
	if err := p.cfg.Runtime.KillPod(ctx, rs, grace); err != nil {
		return err
	}
	after, err := p.cfg.Runtime.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		return err
	}
	for _, c := range after.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return fmt.Errorf("container %s of pod %s/%s is still running after being stopped", c.Name, pod.Namespace, pod.Name)
		}
	}
	p.status.SetPodStatus(pod, terminalStatus(generateAPIPodStatus(pod, after, p.statusInputs(pod.UID))))
	return nil
}

// SyncTerminatedPod publishes the final status of a pod whose containers all stopped; the status
// manager then finishes a pending deletion in the API (upstream: kubelet.go SyncTerminatedPod).
func (p *pods) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod, rs *kubecontainer.PodStatus) error {
	p.status.SetPodStatus(pod, terminalStatus(generateAPIPodStatus(pod, rs, p.statusInputs(pod.UID))))
	p.cfg.Secrets.UnregisterPod(pod) // its containers are gone: nothing reads its Secrets any more
	klog.FromContext(ctx).V(2).Info("Pod terminated", "pod", klog.KObj(pod))
	return nil
}

// terminalStatus gives a stopped pod its final phase, as the kubelet does since v1.27: Succeeded
// when every container exited 0, else Failed; waiting containers become terminated.
func terminalStatus(st corev1.PodStatus) corev1.PodStatus {
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return st
	}
	st.Phase = corev1.PodSucceeded
	for i, cs := range st.ContainerStatuses {
		if cs.State.Terminated == nil {
			st.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated"}}
			if cs.LastTerminationState.Terminated != nil {
				st.ContainerStatuses[i].State = cs.LastTerminationState
			}
		}
		st.ContainerStatuses[i].Ready = false
		if t := st.ContainerStatuses[i].State.Terminated; t.ExitCode != 0 {
			st.Phase = corev1.PodFailed
		}
	}
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; t == corev1.PodReady || t == corev1.ContainersReady {
			st.Conditions[i].Status, st.Conditions[i].Reason = corev1.ConditionFalse, "PodCompleted"
		}
	}
	return st
}

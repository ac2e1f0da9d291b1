package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// The loops' periods and WaitForAttachAndMount's timing, as upstream's volume_manager.go.
const (
	reconcilerLoopPeriod           = 100 * time.Millisecond
	populatorLoopPeriod            = 100 * time.Millisecond
	podAttachAndMountTimeout       = 2*time.Minute + 3*time.Second
	podAttachAndMountRetryInterval = 300 * time.Millisecond
)

// PodManager is the source of the pods that should run (the kubelet's pod manager).
type PodManager interface {
	// GetPods returns the desired pods; the caller must not modify them.
	GetPods() []*corev1.Pod
}

// PodStateProvider tells where a pod's worker is (the kubelet's pod workers). Neither blocks.
type PodStateProvider interface {
	// ShouldPodContainersBeTerminating: the pod is stopping or stopped; it gets no new volume.
	ShouldPodContainersBeTerminating(uid types.UID) bool
	// ShouldPodRuntimeBeRemoved: none of the pod's containers can run any more; its volumes go.
	ShouldPodRuntimeBeRemoved(uid types.UID) bool
}

// Config configures a Manager. Every field but Clock is required.
type Config struct {
	RootDir   string               // --root-dir: pods' volumes live under <RootDir>/pods/<uid>/volumes
	Projector *volume.Projector    // writes secret/configMap/projected/downwardAPI, makes emptyDir, checks hostPath
	Client    kubernetes.Interface // gets the pods' PersistentVolumeClaims and PersistentVolumes (as the node)
	Pods      PodManager
	PodState  PodStateProvider
	Recorder  record.EventRecorder // FailedMount Events
	// NodeLabels returns this Node's labels, for a PersistentVolume's nodeAffinity; it may call
	// the API server.
	NodeLabels func(ctx context.Context) (map[string]string, error)
	Clock      clock.WithTicker // the loops, back-off and WaitForAttachAndMount; nil is the real clock
	CSI        CSIVolumes       // csi PersistentVolumes and inline csi volumes; nil refuses them as unsupported
	// Journal records each first set-up ("setUp"), tear-down ("tearDown") and orphaned pod
	// directory removed ("removeOrphan"); the zero Recorder records nothing.
	Journal journal.Recorder
}

// Manager is the volume manager: see the package documentation.
type Manager struct {
	cfg     Config
	plugins []plugin
	dsw     *desiredStateOfWorld
	asw     *actualStateOfWorld

	mu           sync.Mutex
	processed    map[types.UID]bool // pods the populator has processed fully (upstream processedPods)
	pending      map[string]bool    // volumes with an operation running
	backoff      *flowcontrol.Backoff
	failingSince map[string]time.Time // when each volume's mount started failing
	ops          sync.WaitGroup       // running operations
}

// New validates cfg and makes the manager; nothing runs until Run.
func New(cfg Config) (*Manager, error) {
	if cfg.RootDir == "" || cfg.Projector == nil || cfg.Client == nil || cfg.Pods == nil || cfg.PodState == nil ||
		cfg.Recorder == nil || cfg.NodeLabels == nil {
		return nil, errors.New("volumemanager: RootDir, Projector, Client, Pods, PodState, Recorder and NodeLabels are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	m := &Manager{
		cfg:          cfg,
		plugins:      []plugin{projectorPlugin{projector: cfg.Projector}, localPlugin{}},
		dsw:          newDesiredStateOfWorld(),
		asw:          newActualStateOfWorld(),
		processed:    map[types.UID]bool{},
		pending:      map[string]bool{},
		failingSince: map[string]time.Time{},
	}
	if cfg.CSI != nil {
		m.plugins = append(m.plugins, csiPlugin{volumes: cfg.CSI})
	}
	m.backoff = newOperationBackoff(m)
	return m, nil
}

// Run runs the populator and the reconciler until ctx ends, then waits for running operations.
func (m *Manager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { m.every(ctx, populatorLoopPeriod, m.populateOnce) })
	m.every(ctx, reconcilerLoopPeriod, m.reconcileOnce)
	wg.Wait()
	m.ops.Wait()
}

// every runs turn, then again each period on the manager's clock, until ctx ends.
func (m *Manager) every(ctx context.Context, period time.Duration, turn func(context.Context)) {
	t := m.cfg.Clock.NewTicker(period)
	defer t.Stop()
	for {
		turn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// ReprocessPod has the populator process the pod again at its next turn, which marks the pod's
// set-up Secret, ConfigMap, projected and downwardAPI volumes for a remount (upstream
// ReprocessPod): their files follow the objects and the pod's labels and annotations.
func (m *Manager) ReprocessPod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.processed, uid)
}

// WaitForAttachAndMount blocks until every volume the pod's containers mount is set up (upstream
// volume_manager.go WaitForAttachAndMount), polling every 300 ms, and asks for a remount of those
// that follow API objects. It returns early with the populator's errors (a claim not bound, a
// type without plugin), and after 2 min 3 s with context.DeadlineExceeded (wait.Interrupted, as
// upstream's: SyncPod records no Event for it). The error says which volumes are missing.
func (m *Manager) WaitForAttachAndMount(ctx context.Context, pod *corev1.Pod) error {
	expected := expectedVolumes(pod)
	if len(expected) == 0 {
		return nil
	}
	klog.FromContext(ctx).V(3).Info("Waiting for volumes to attach and mount for pod", "pod", klog.KObj(pod))
	m.ReprocessPod(pod.UID)
	err := m.poll(ctx, func() (bool, error) {
		if errs := m.dsw.popPodErrors(pod.UID); len(errs) > 0 {
			return true, errors.New(strings.Join(errs, "; "))
		}
		return len(m.unmountedVolumes(pod.UID, expected)) == 0, nil
	})
	if err == nil {
		return nil
	}
	unmounted := m.unmountedVolumes(pod.UID, expected)
	if len(unmounted) == 0 {
		return nil
	}
	// No plugin of ours attaches (no attach/detach controller volumes): none is unattached.
	return fmt.Errorf("unmounted volumes=%v, unattached volumes=%v, failed to process volumes=%v: %w",
		unmounted, []string{}, m.volumesNotInDSW(pod.UID, expected), err)
}

// poll calls done now and every podAttachAndMountRetryInterval until it reports true or an error,
// ctx ends, or podAttachAndMountTimeout passes (then context.DeadlineExceeded).
func (m *Manager) poll(ctx context.Context, done func() (bool, error)) error {
	deadline := m.cfg.Clock.Now().Add(podAttachAndMountTimeout)
	for {
		if ok, err := done(); ok || err != nil {
			return err
		}
		if !m.cfg.Clock.Now().Before(deadline) {
			return context.DeadlineExceeded
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.cfg.Clock.After(podAttachAndMountRetryInterval):
		}
	}
}

// expectedVolumes are the volumes some container mounts (upstream getExpectedVolumes).
func expectedVolumes(pod *corev1.Pod) []string {
	var names []string
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, vm := range c.VolumeMounts {
				if !slices.Contains(names, vm.Name) {
					names = append(names, vm.Name)
				}
			}
		}
	}
	return names
}

// unmountedVolumes are the expected volumes not set up, sorted.
func (m *Manager) unmountedVolumes(uid types.UID, expected []string) []string {
	mounted := m.asw.mountedVolumes(uid)
	var out []string
	for _, name := range expected {
		if _, ok := mounted[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// volumesNotInDSW are the expected volumes the populator could not add, sorted.
func (m *Manager) volumesNotInDSW(uid types.UID, expected []string) []string {
	desired, _ := m.dsw.getPod(uid)
	out := []string{}
	for _, name := range expected {
		if desired == nil {
			out = append(out, name)
		} else if _, ok := desired.volumes[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// MountedVolume is a set-up volume as a container mounts it.
type MountedVolume struct {
	HostPath string        // what the runtime bind-mounts
	ReadOnly bool          // the claim (or a csi volume's readOnly) asks for read-only: every mount of it is read-only
	Metrics  MetricsSource // how its usage is measured for the volume stats
}

// GetMountedVolumesForPod returns the pod's set-up volumes by the pod's volume name (upstream
// GetMountedVolumesForPod); the caller may keep the map.
func (m *Manager) GetMountedVolumesForPod(uid types.UID) map[string]MountedVolume {
	out := map[string]MountedVolume{}
	for name, v := range m.asw.mountedVolumes(uid) {
		out[name] = MountedVolume{HostPath: v.dir, ReadOnly: v.spec.mountReadOnly(), Metrics: v.spec.metrics()}
	}
	return out
}

// CleanupOrphanedPodDirs removes <root>/pods/<uid> of each pod not in keep that has no volume
// desired or set up (upstream kubelet_volumes.go cleanupOrphanedPodDirs: the reconciler tears
// volumes down first), and forgets the back-off of volumes that are gone. Housekeeping calls it.
func (m *Manager) CleanupOrphanedPodDirs(ctx context.Context, keep map[types.UID]bool) error {
	m.mu.Lock()
	m.backoff.GC()
	for key := range m.failingSince {
		uid, _, _ := strings.Cut(key, "/")
		if _, ok := m.dsw.getPod(types.UID(uid)); !ok {
			delete(m.failingSince, key)
		}
	}
	m.mu.Unlock()
	entries, err := os.ReadDir(filepath.Join(m.cfg.RootDir, "pods"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	mounted := m.asw.podsWithVolumes()
	var errs []error
	for _, e := range entries {
		uid := types.UID(e.Name())
		if _, desired := m.dsw.getPod(uid); keep[uid] || desired || len(mounted[uid]) > 0 {
			continue
		}
		klog.FromContext(ctx).V(2).Info("Removing the directory of a pod that is gone", "podUID", uid)
		err := m.cfg.Projector.CleanupPod(uid)
		m.cfg.Journal.Record("removeOrphan", journal.PodRef{UID: string(uid)}, journal.WithError(map[string]string{"uid": string(uid)}, err))
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

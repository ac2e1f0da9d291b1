package statusmanager

// The manager and its cache of pod statuses, which the setters fill (upstream: status_manager.go
// manager, SetPodStatus, SetContainerReadiness, updateStatusInternal).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
)

const (
	// DefaultSyncPeriod is how often every pending status is synced, as upstream's syncPeriod.
	DefaultSyncPeriod = 10 * time.Second

	// syncChannelSize bounds the queue of pods to sync. When it is full a change is not lost:
	// the next resync sends it.
	syncChannelSize = 1000
)

// MirrorPodTranslator finds the mirror pod of a static pod: the API object that carries the static
// pod's status (podmanager implements it).
type MirrorPodTranslator interface {
	// GetMirrorPodByPod returns the mirror pod of pod and true, or false if there is none (yet).
	// It must not block; the manager only reads the returned pod.
	GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool)
}

// PodGetter returns the kubelet's copy of an API pod, as its pod source last saw it: with the
// status in the API, which others may have changed (podmanager implements it).
type PodGetter interface {
	// GetPodByUID returns the pod and true, or false if the kubelet does not know it. It must not
	// block; the manager only reads the returned pod.
	GetPodByUID(uid types.UID) (*corev1.Pod, bool)
}

// Config configures the status manager.
type Config struct {
	// Client writes pods/status and deletes pods. Required.
	Client kubernetes.Interface
	// Clock drives the resync ticker and the transition times. Defaults to the real clock.
	Clock clock.WithTicker
	// SyncPeriod is how often every pending status is synced. Defaults to 10 s.
	SyncPeriod time.Duration
	// PodDeletionSafety returns true when the pod's containers are all stopped and its resources
	// reclaimed, so that a pod being deleted may be removed from the API server. It is given the
	// API pod and the kubelet's status. Defaults to "every container status is terminated or
	// waiting, and none running".
	PodDeletionSafety func(pod *corev1.Pod, status corev1.PodStatus) bool
	// MirrorPods translates a static pod to its mirror pod. Optional: without it, a static pod's
	// status is written to the API pod of the same name and UID.
	MirrorPods MirrorPodTranslator
	// Pods is the kubelet's copy of the API pods. Optional: with it, the resync also rewrites a
	// status someone else changed in the API (see needsReconcile).
	Pods PodGetter
	// Journal, if set, records each version bump, each PATCH sent (with its response code) and
	// the final delete of a deleted pod.
	Journal journal.Recorder
}

// Manager caches the pod statuses the kubelet computes and syncs them to the API server. Create
// it with New and run its loop with Run; the setters may be called before Run starts.
type Manager struct {
	cfg Config

	// mu guards statuses. It is never held during network I/O.
	mu       sync.Mutex
	statuses map[types.UID]entry

	// syncCh carries the UIDs of pods whose status changed, from the setters to Run.
	syncCh chan types.UID
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil {
		return nil, errors.New("statusmanager: Client is required")
	}
	if cfg.SyncPeriod < 0 {
		return nil, fmt.Errorf("statusmanager: SyncPeriod %s must be positive (or 0 for the default %s)", cfg.SyncPeriod, DefaultSyncPeriod)
	}
	if cfg.SyncPeriod == 0 {
		cfg.SyncPeriod = DefaultSyncPeriod
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.PodDeletionSafety == nil {
		cfg.PodDeletionSafety = allContainersStopped
	}
	return &Manager{
		cfg:      cfg,
		statuses: make(map[types.UID]entry),
		syncCh:   make(chan types.UID, syncChannelSize),
	}, nil
}

// GetPodStatus returns a copy of the cached status of the pod with this UID.
func (m *Manager) GetPodStatus(uid types.UID) (corev1.PodStatus, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.statuses[uid]
	if !ok {
		return corev1.PodStatus{}, false
	}
	return *e.status.DeepCopy(), true
}

// Len returns the number of cached statuses (for tests and metrics).
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.statuses)
}

// SetPodStatus caches a copy of status for pod and triggers a sync. The status's
// observedGeneration becomes pod's generation: the spec this status was computed from
// (upstream CalculatePodStatusObservedGeneration; PodObservedGenerationTracking is GA and locked
// on since v1.35). A status equal to the cached one is ignored, unless the pod is being deleted
// (so the deletion can still finish). It never blocks on the network.
func (m *Manager) SetPodStatus(pod *corev1.Pod, status corev1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	status.ObservedGeneration = pod.Generation // status is the caller's copy: updateLocked copies it again
	m.updateLocked(pod, status, pod.DeletionTimestamp != nil)
}

// SetContainerReadiness sets the ready flag of the container (or sidecar) with this ID (as in
// containerStatuses[].containerID, "<runtime>://<id>") and recomputes the ContainersReady and
// Ready conditions: the readiness probe's way into the status (upstream SetContainerReadiness).
// Unknown pods and containers, and unchanged readiness, are ignored.
func (m *Manager) SetContainerReadiness(podUID types.UID, containerID string, ready bool) {
	m.setContainer(podUID, containerID, func(pod *corev1.Pod, status *corev1.PodStatus, cs *corev1.ContainerStatus) bool {
		if cs.Ready == ready {
			return false
		}
		cs.Ready = ready
		status.Conditions = setCondition(status.Conditions, PodReadyCondition(pod, status))
		status.Conditions = setCondition(status.Conditions, ContainersReadyCondition(pod, status))
		return true
	})
}

// SetContainerStartup sets the started flag of the container with this ID: the startup probe's
// way into the status (upstream SetContainerStartup).
func (m *Manager) SetContainerStartup(podUID types.UID, containerID string, started bool) {
	m.setContainer(podUID, containerID, func(_ *corev1.Pod, _ *corev1.PodStatus, cs *corev1.ContainerStatus) bool {
		if cs.Started != nil && *cs.Started == started {
			return false
		}
		cs.Started = &started
		return true
	})
}

// setContainer applies change to a copy of the cached status of the container with containerID
// (regular or init) and stores it when change reports a change.
func (m *Manager) setContainer(podUID types.UID, containerID string, change func(*corev1.Pod, *corev1.PodStatus, *corev1.ContainerStatus) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.statuses[podUID]
	if !ok {
		return
	}
	status := *e.status.DeepCopy()
	for _, list := range [][]corev1.ContainerStatus{status.ContainerStatuses, status.InitContainerStatuses} {
		if i := slices.IndexFunc(list, func(c corev1.ContainerStatus) bool { return c.ContainerID == containerID }); i >= 0 {
			if change(e.pod, &status, &list[i]) {
				m.updateLocked(e.pod, status, false)
			}
			return
		}
	}
}

// RemoveOrphanedStatuses drops the cached statuses of pods not in podUIDs (the pods the kubelet
// still knows).
func (m *Manager) RemoveOrphanedStatuses(podUIDs map[types.UID]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for uid := range m.statuses {
		if !podUIDs[uid] {
			delete(m.statuses, uid)
		}
	}
}

// updateLocked stores status for pod as the next version, unless it equals the cached one and
// force is false, and triggers a sync. The caller holds m.mu.
func (m *Manager) updateLocked(pod *corev1.Pod, status corev1.PodStatus, force bool) {
	e, cached := m.statuses[pod.UID]
	old := &pod.Status
	if cached {
		old = &e.status
	}
	status = prepareStatus(old, status, m.cfg.Clock.Now())
	if cached && !force && !statusChanged(e.status, status) {
		return
	}
	podCopy := pod.DeepCopy()
	podCopy.Status = corev1.PodStatus{}
	e.pod = podCopy
	e.status = status
	e.version++
	e.deleting = e.deleting || pod.DeletionTimestamp != nil
	m.statuses[pod.UID] = e
	m.cfg.Journal.Record("version bump", journal.Pod(e.pod), map[string]string{"version": strconv.FormatUint(e.version, 10), "phase": string(status.Phase)})
	select {
	case m.syncCh <- pod.UID:
	default:
		// The queue is full: the next resync sends this version.
	}
}

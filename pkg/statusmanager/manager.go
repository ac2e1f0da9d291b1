package statusmanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/journal"
)

const (
	// DefaultSyncPeriod is how often every pending status is synced, as upstream's syncPeriod.
	DefaultSyncPeriod = 10 * time.Second

	// syncChannelSize bounds the queue of pods to sync. When it is full a change is not lost:
	// the next resync sends it.
	syncChannelSize = 1000

	// configSourceAnnotationKey names where a pod came from; "api" for the API server, anything
	// else (podsource writes "file") is a static pod whose status goes to its mirror pod.
	// Upstream kubetypes.ConfigSourceAnnotationKey and IsStaticPod.
	configSourceAnnotationKey = "kubernetes.io/config.source"
	apiserverSource           = "api"
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
	Journal *journal.Journal
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

// SetPodStatus caches a copy of status for pod and triggers a sync. A status equal to the cached
// one is ignored, unless the pod is being deleted (so the deletion can still finish). It never
// blocks on the network.
func (m *Manager) SetPodStatus(pod *corev1.Pod, status corev1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updateLocked(pod, status, pod.DeletionTimestamp != nil)
}

// SetContainerReadiness sets the ready flag of the container with this ID (as in
// containerStatuses[].containerID, "<runtime>://<id>") and recomputes the ContainersReady and
// Ready conditions. Unknown pods and containers, and unchanged readiness, are ignored.
func (m *Manager) SetContainerReadiness(podUID types.UID, containerID string, ready bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.statuses[podUID]
	if !ok {
		return
	}
	status := *e.status.DeepCopy()
	i := slices.IndexFunc(status.ContainerStatuses, func(c corev1.ContainerStatus) bool { return c.ContainerID == containerID })
	if i < 0 || status.ContainerStatuses[i].Ready == ready {
		return
	}
	status.ContainerStatuses[i].Ready = ready
	containersReady, podReady := readinessConditions(status.ContainerStatuses)
	status.Conditions = setCondition(status.Conditions, containersReady)
	status.Conditions = setCondition(status.Conditions, podReady)
	m.updateLocked(e.pod, status, false)
}

// TerminatePod marks every container of pod that is not terminated as terminated with an unknown
// status and moves the pod to a terminal phase, then triggers a sync. The pod workers call it
// when they are done with a pod, so its status never claims a container still runs.
func (m *Manager) TerminatePod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	base := pod.Status
	if e, ok := m.statuses[pod.UID]; ok {
		base = e.status
	}
	m.updateLocked(pod, terminatedStatus(base), true)
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
	m.note("version bump", e.pod, map[string]string{"version": strconv.FormatUint(e.version, 10), "phase": string(status.Phase)})
	select {
	case m.syncCh <- pod.UID:
	default:
		// The queue is full: the next resync sends this version.
	}
}

// Run syncs statuses to the API server until ctx is cancelled: a pod as soon as its status
// changed, and every SyncPeriod all pods with something pending (a failed write, a deletion to
// finish). Both happen on this goroutine, so two syncs of one pod never race.
func (m *Manager) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting pod status sync loop", "syncPeriod", m.cfg.SyncPeriod)
	ticker := m.cfg.Clock.NewTicker(m.cfg.SyncPeriod)
	defer ticker.Stop()
	for m.syncLoopIteration(ctx, ticker.C()) {
	}
	logger.Info("Stopped pod status sync loop")
}

// syncLoopIteration is one turn of Run: sync the pod whose UID arrives on syncCh, or everything
// pending when resync ticks. It returns false once ctx is done.
func (m *Manager) syncLoopIteration(ctx context.Context, resync <-chan time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case uid := <-m.syncCh:
		// Several UIDs of one pod may be queued; only the first finds a newer version to send.
		if m.pending(uid) {
			m.syncAndLog(ctx, uid)
		}
	case <-resync:
		m.syncAll(ctx)
	}
	return true
}

// syncAll is the resync turn: it syncs every cached pod with something pending, or whose API
// status someone else changed (upstream syncBatch: needsUpdate or needsReconcile).
func (m *Manager) syncAll(ctx context.Context) {
	m.mu.Lock()
	uids := make([]types.UID, 0, len(m.statuses))
	for uid := range m.statuses {
		uids = append(uids, uid)
	}
	m.mu.Unlock()
	klog.FromContext(ctx).V(4).Info("Resyncing pod statuses", "pods", len(uids))
	for _, uid := range uids {
		if m.pending(uid) || m.needsReconcile(uid) {
			m.syncAndLog(ctx, uid)
		}
	}
}

func (m *Manager) syncAndLog(ctx context.Context, uid types.UID) {
	if err := m.syncPod(ctx, uid); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to sync pod status; retrying on the next resync", "podUID", uid)
	}
}

// pending reports whether the cached status of uid has something to send (see needsSync).
func (m *Manager) pending(uid types.UID) bool {
	m.mu.Lock()
	e, ok := m.statuses[uid]
	m.mu.Unlock()
	if !ok {
		return false
	}
	target, ok := m.target(e.pod)
	return ok && needsSync(e, target.UID)
}

// needsReconcile reports whether the API status of uid, as the kubelet last saw it, differs from
// what syncPod would write, although the version cached was written: someone else changed it.
// kcm does so when it marks the pods of a node it thinks is gone not Ready; the kubelet, back in
// touch, must put its status back (upstream: needsReconcile).
// forgotten reports whether the kubelet no longer knows pod (an API pod it saw deleted).
func (m *Manager) forgotten(pod *corev1.Pod) bool {
	if isStaticPod(pod) || m.cfg.Pods == nil {
		return false
	}
	_, known := m.cfg.Pods.GetPodByUID(pod.UID)
	return !known
}

func (m *Manager) needsReconcile(uid types.UID) bool {
	m.mu.Lock()
	e, ok := m.statuses[uid]
	m.mu.Unlock()
	if !ok {
		return false
	}
	var seen *corev1.Pod
	switch {
	case !isStaticPod(e.pod) && m.cfg.Pods != nil:
		seen, ok = m.cfg.Pods.GetPodByUID(uid)
	case isStaticPod(e.pod) && m.cfg.MirrorPods != nil:
		seen, ok = m.cfg.MirrorPods.GetMirrorPodByPod(e.pod)
	default:
		return false
	}
	return ok && statusChanged(seen.Status, mergeStatus(seen.Status, e.status))
}

// target returns the API object that carries pod's status: pod itself, or the mirror pod of a
// static pod. ok is false for a static pod whose mirror pod does not exist yet.
func (m *Manager) target(pod *corev1.Pod) (apiObject, bool) {
	if m.cfg.MirrorPods == nil || !isStaticPod(pod) {
		return apiObject{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}, true
	}
	mirror, ok := m.cfg.MirrorPods.GetMirrorPodByPod(pod)
	if !ok {
		return apiObject{}, false
	}
	return apiObject{Namespace: mirror.Namespace, Name: mirror.Name, UID: mirror.UID, Mirror: true}, true
}

// syncPod is one turn of the loop for one pod: GET the API pod, PATCH its status if it differs
// from the cached one, and finish the pod's deletion if it is being deleted and safe to remove.
func (m *Manager) syncPod(ctx context.Context, uid types.UID) error {
	logger := klog.FromContext(ctx)
	m.mu.Lock()
	e, ok := m.statuses[uid]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	target, ok := m.target(e.pod)
	if !ok {
		logger.V(4).Info("Static pod has no mirror pod yet; syncing its status on the next resync", "pod", klog.KObj(e.pod))
		return nil
	}
	pods := m.cfg.Client.CoreV1().Pods(target.Namespace)

	apiPod, err := pods.Get(ctx, target.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err) && m.forgotten(e.pod):
		// The Node authorizer answers 403, not 404, for a pod that is no longer bound to this node
		// (a deleted pod has left its graph). Any other 403 (wrong RBAC) is an error a user must see.
		logger.V(2).Info("Pod no longer exists on the API server for this node; dropping its status", "pod", klog.KObj(e.pod), "podUID", uid, "reason", apierrors.ReasonForError(err))
		m.drop(uid)
		return nil
	case err != nil:
		return fmt.Errorf("get pod %s/%s: %w", target.Namespace, target.Name, err)
	case apiPod.UID != target.UID && target.Mirror:
		logger.V(4).Info("Mirror pod was recreated; syncing its status on the next resync", "pod", klog.KObj(apiPod), "mirrorPodUID", apiPod.UID)
		return nil
	case apiPod.UID != target.UID:
		logger.V(2).Info("Pod was deleted and recreated; dropping the old pod's status", "pod", klog.KObj(apiPod), "oldPodUID", uid, "podUID", apiPod.UID)
		m.drop(uid)
		return nil
	}

	merged := mergeStatus(apiPod.Status, e.status)
	if statusChanged(apiPod.Status, merged) {
		patch, err := statusPatch(apiPod.UID, apiPod.Status, merged)
		if err != nil {
			return fmt.Errorf("pod %s/%s: %w", apiPod.Namespace, apiPod.Name, err)
		}
		_, err = pods.Patch(ctx, apiPod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		m.note("PATCH", e.pod, withError(map[string]string{"version": strconv.FormatUint(e.version, 10), "phase": string(merged.Phase), "code": responseCode(err)}, err))
		if err != nil {
			return fmt.Errorf("patch status of pod %s/%s: %w", apiPod.Namespace, apiPod.Name, err)
		}
		logger.V(2).Info("Updated pod status", "pod", klog.KObj(apiPod), "podUID", uid, "version", e.version, "patch", string(patch))
	} else {
		logger.V(4).Info("Pod status is up to date", "pod", klog.KObj(apiPod), "podUID", uid, "version", e.version)
	}
	m.recordWritten(uid, apiPod, e.version)

	// Mirror pods are not deleted here: podmanager deletes them with their static pod.
	if target.Mirror || apiPod.DeletionTimestamp == nil || !m.cfg.PodDeletionSafety(apiPod, e.status) {
		return nil
	}
	err = pods.Delete(ctx, apiPod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		// Never delete a pod recreated under the same name.
		Preconditions: metav1.NewUIDPreconditions(string(apiPod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete terminated pod %s/%s: %w", apiPod.Namespace, apiPod.Name, err)
	}
	logger.V(2).Info("Pod fully terminated; removed it from the API server", "pod", klog.KObj(apiPod), "podUID", uid)
	m.note("delete", e.pod, map[string]string{"code": responseCode(err)})
	m.drop(uid)
	return nil
}

// note records a status event of pod in the journal.
func (m *Manager) note(kind string, pod *corev1.Pod, fields map[string]string) {
	m.cfg.Journal.Record(journal.Event{Source: journal.SourceStatus, Kind: kind,
		Pod: journal.PodKey(pod.Namespace, pod.Name), UID: string(pod.UID), Fields: fields})
}

// responseCode is the HTTP status code of an API request's answer, for the journal: "200" for
// success, the code of an API error, "none" when no answer came (timeout, connection refused).
func responseCode(err error) string {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return "200"
	case errors.As(err, &status) && status.Status().Code != 0:
		return strconv.Itoa(int(status.Status().Code))
	}
	return "none"
}

func withError(fields map[string]string, err error) map[string]string {
	if err != nil {
		fields["error"] = err.Error()
	}
	return fields
}

// recordWritten notes that version of uid's status is now in the API object apiPod, and whether
// that pod is being deleted. Versions written only grow.
func (m *Manager) recordWritten(uid types.UID, apiPod *corev1.Pod, version uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.statuses[uid]
	if !ok {
		return
	}
	if e.writtenTo != apiPod.UID {
		e.written = 0
	}
	e.written = max(e.written, version)
	e.writtenTo = apiPod.UID
	e.deleting = e.deleting || apiPod.DeletionTimestamp != nil
	m.statuses[uid] = e
}

func (m *Manager) drop(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, uid)
}

// apiObject names the API pod a status is written to.
type apiObject struct {
	Namespace, Name string
	UID             types.UID
	// Mirror is set when the object is the mirror pod of a static pod.
	Mirror bool
}

// isStaticPod tells whether pod came from a manifest file rather than the API server.
func isStaticPod(pod *corev1.Pod) bool {
	source := pod.Annotations[configSourceAnnotationKey]
	return source != "" && source != apiserverSource
}

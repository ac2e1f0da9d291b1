package statusmanager

// The sync loop: from the cache to the API server (upstream: status_manager.go Start, syncBatch,
// needsReconcile and syncPod).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

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

// forgotten reports whether the kubelet no longer knows pod (an API pod it saw deleted).
func (m *Manager) forgotten(pod *corev1.Pod) bool {
	if kubecontainer.IsStaticPod(pod) || m.cfg.Pods == nil {
		return false
	}
	_, known := m.cfg.Pods.GetPodByUID(pod.UID)
	return !known
}

// needsReconcile reports whether the API status of uid, as the kubelet last saw it, differs from
// what syncPod would write, although the version cached was written: someone else changed it.
// kcm does so when it marks the pods of a node it thinks is gone not Ready; the kubelet, back in
// touch, must put its status back (upstream: needsReconcile).
func (m *Manager) needsReconcile(uid types.UID) bool {
	m.mu.Lock()
	e, ok := m.statuses[uid]
	m.mu.Unlock()
	if !ok {
		return false
	}
	var seen *corev1.Pod
	switch {
	case !kubecontainer.IsStaticPod(e.pod) && m.cfg.Pods != nil:
		seen, ok = m.cfg.Pods.GetPodByUID(uid)
	case kubecontainer.IsStaticPod(e.pod) && m.cfg.MirrorPods != nil:
		seen, ok = m.cfg.MirrorPods.GetMirrorPodByPod(e.pod)
	default:
		return false
	}
	return ok && statusChanged(seen.Status, mergeStatus(seen.Status, e.status))
}

// target returns the API object that carries pod's status: pod itself, or the mirror pod of a
// static pod. ok is false for a static pod whose mirror pod does not exist yet.
func (m *Manager) target(pod *corev1.Pod) (apiObject, bool) {
	if m.cfg.MirrorPods == nil || !kubecontainer.IsStaticPod(pod) {
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
	case apierrors.IsNotFound(err):
		logger.V(2).Info("Pod no longer exists on the API server; dropping its status", "pod", klog.KObj(e.pod), "podUID", uid)
		m.drop(uid)
		return nil
	case apierrors.IsForbidden(err):
		return m.forbidden(ctx, uid, e, fmt.Errorf("get pod %s/%s: %w", target.Namespace, target.Name, err))
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
		m.cfg.Journal.Record("PATCH", journal.Pod(e.pod), journal.WithError(map[string]string{"version": strconv.FormatUint(e.version, 10), "phase": string(merged.Phase), "code": responseCode(err)}, err))
		if apierrors.IsForbidden(err) { // the pod deleted since the GET: it left the authorizer's graph
			return m.forbidden(ctx, uid, e, fmt.Errorf("patch status of pod %s/%s: %w", apiPod.Namespace, apiPod.Name, err))
		}
		if err != nil {
			return fmt.Errorf("patch status of pod %s/%s: %w", apiPod.Namespace, apiPod.Name, err)
		}
		logger.V(2).Info("Updated pod status", "pod", klog.KObj(apiPod), "podUID", uid, "version", e.version, "patch", string(patch))
	} else {
		logger.V(4).Info("Pod status is up to date", "pod", klog.KObj(apiPod), "podUID", uid, "version", e.version)
	}
	m.recordWritten(uid, apiPod, e.version)

	// Mirror pods are not deleted here: podmanager deletes them with their static pod. Nor is a
	// pod whose phase in the API is not terminal yet (upstream canBeDeleted): its worker may have
	// stopped it since e was read, but its final status must reach the API before the object goes.
	if target.Mirror || apiPod.DeletionTimestamp == nil || !isTerminalPhase(merged.Phase) || !m.cfg.PodDeletionSafety(apiPod, e.status) {
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
	m.cfg.Journal.Record("delete", journal.Pod(e.pod), map[string]string{"code": responseCode(err)})
	m.drop(uid)
	return nil
}

// forbidden handles a 403 for the pod of entry e, as judgeForbidden decides: drop the status of
// a pod the kubelet no longer knows, wait quietly for the API server to catch up with a pod it
// knows, or return err once the 403s have lasted authorizerLag.
func (m *Manager) forbidden(ctx context.Context, uid types.UID, e entry, err error) error {
	logger := klog.FromContext(ctx)
	now := m.cfg.Clock.Now()
	since := e.forbiddenSince
	if since.IsZero() {
		since = now
		m.mu.Lock()
		if cur, ok := m.statuses[uid]; ok {
			cur.forbiddenSince = now
			m.statuses[uid] = cur
		}
		m.mu.Unlock()
	}
	switch judgeForbidden(!m.forgotten(e.pod), since, now) {
	case podGone:
		logger.V(2).Info("Pod no longer exists on the API server for this node; dropping its status", "pod", klog.KObj(e.pod), "podUID", uid)
		m.drop(uid)
		return nil
	case notLinkedYet:
		logger.V(2).Info("API server does not link the pod to this node yet; syncing its status on the next resync", "pod", klog.KObj(e.pod), "podUID", uid, "err", err)
		return nil
	}
	return err
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
	e.forbiddenSince = time.Time{}
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

package podworkers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods known only from the runtime (upstream: pod_workers.go UpdatePod's RunningPod and
// isRuntimePod, podWorkerLoop's SyncTerminatingRuntimePod, completeTerminatingRuntimePod).
// Housekeeping finds them running with no desired pod behind them — orphaned by a kubelet
// restart, or by a bug — and hands them here to be stopped, so that a pod's containers are
// stopped by its worker and nowhere else. Such a worker starts terminating, calls
// SyncTerminatingRuntimePod, and is then finished: there is no spec to sync and no status to
// publish. A desired pod of the same UID that arrives meanwhile takes its place.

// runtimePodUpdate fills update.Pod for a RunningPod update (p.mu held) and reports whether the
// update goes on. A runtime pod can only be killed; if a worker already knows a desired pod of
// that UID, the kill is for that pod (upstream: "use the most recent spec instead"); otherwise
// the worker works on a minimal pod with the runtime's name, namespace and UID.
func (p *PodWorkers) runtimePodUpdate(update *UpdatePodOptions) bool {
	if update.UpdateType != SyncPodKill {
		return false
	}
	rp := update.RunningPod
	if st, ok := p.pods[rp.ID]; ok && st.runningPod == nil {
		update.Pod, update.MirrorPod, update.RunningPod = st.pod, st.mirrorPod, nil
		return true
	}
	update.Pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: rp.Name, Namespace: rp.Namespace, UID: rp.ID}}
	return true
}

package podworkers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// When a pod is synced again without an update: after ResyncInterval, after BackOffPeriod when
// its sync failed.

// logSyncError logs a failed sync by upstream's rule (pod_workers.go podWorkerLoop): a sync cut
// short by cancellation (here also: any error while the pod workers stop) at V(2), every other
// error at Error level. stopping: the pod workers' context is done.
func logSyncError(logger klog.Logger, err error, retryIn time.Duration, stopping bool) {
	switch {
	case stopping || errors.Is(err, context.Canceled):
		logger.V(2).Info("Sync exited with context cancellation error", "err", err.Error())
	default:
		logger.Error(err, "Error syncing pod; will retry", "retryIn", retryIn)
	}
}

// DuePods returns the pods whose resync or retry time has come (upstream: the work queue the
// syncLoop's syncCh drains). The caller sends them a SyncPodSync.
func (p *PodWorkers) DuePods() []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Clock.Now()
	var due []*corev1.Pod
	for _, st := range p.pods {
		if st.state != Finished && !st.working && st.pending == nil && !st.nextSync.IsZero() && !now.Before(st.nextSync) {
			due = append(due, st.pod)
		}
	}
	return due
}

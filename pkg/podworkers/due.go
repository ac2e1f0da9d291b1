package podworkers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// When a pod is synced again without an update: after ResyncInterval, after BackOffPeriod when
// its sync failed, or when a RetryAfterError says.

// RetryAfterError is a failed sync that says when to try again, instead of BackOffPeriod: a
// volume that could not be set up is retried on the volume's own back-off (0.5 s, 1 s, 2 s, …),
// as upstream's volume manager retries a failed mount while the pod worker waits for it.
type RetryAfterError struct {
	Err   error
	After time.Duration
	// Quiet marks an expected wait, not a failure (the API server's authorizer still behind a
	// pod's binding, which the kubelet reports as no Event either): logged at V(2), not as an error.
	Quiet bool
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// logSyncError logs a failed sync by upstream's rule (pod_workers.go podWorkerLoop): a sync cut
// short by cancellation (here also: any error while the pod workers stop) at V(2), every other
// error at Error level; and a quiet RetryAfterError at V(2), as upstream's pod worker logs no
// error while it waits in WaitForAttachAndMount. stopping: the pod workers' context is done.
func logSyncError(logger klog.Logger, err error, retryIn time.Duration, stopping bool) {
	var wait *RetryAfterError
	switch {
	case stopping || errors.Is(err, context.Canceled):
		logger.V(2).Info("Sync exited with context cancellation error", "err", err.Error())
	case errors.As(err, &wait) && wait.Quiet:
		logger.V(2).Info("Sync waiting; will retry", "reason", err.Error(), "retryIn", retryIn)
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

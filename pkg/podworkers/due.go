package podworkers

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// When a pod is synced again without an update: after ResyncInterval, after BackOffPeriod when
// its sync failed, or when a RetryAfterError says.

// RetryAfterError is a failed sync that says when to try again, instead of BackOffPeriod: a
// volume that could not be set up is retried on the volume's own back-off (0.5 s, 1 s, 2 s, …),
// as upstream's volume manager retries a failed mount while the pod worker waits for it.
type RetryAfterError struct {
	Err   error
	After time.Duration
}

func (e *RetryAfterError) Error() string { return e.Err.Error() }
func (e *RetryAfterError) Unwrap() error { return e.Err }

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

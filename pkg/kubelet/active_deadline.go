package kubelet

// activeDeadlineSeconds (upstream: pkg/kubelet/active_deadline.go, a PodSyncLoopHandler and a
// PodSyncHandler): a pod active on the node longer than its spec.activeDeadlineSeconds is
// failed with reason DeadlineExceeded, and its containers are stopped.

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

const (
	reasonDeadlineExceeded  = "DeadlineExceeded"
	messageDeadlineExceeded = "Pod was active on the node longer than the specified deadline"
)

// podEviction is why the kubelet fails a pod that still runs: its phase becomes Failed with this
// reason and message (upstream lifecycle.ShouldEvictResponse).
type podEviction struct {
	reason, message string
	// condition, when set, is added to (or replaces) the pod's condition of its type: the
	// DisruptionTarget of a pod the eviction manager evicts.
	condition *corev1.PodCondition
}

// pastActiveDeadline reports whether pod, started at its status's startTime, has been active for
// activeDeadlineSeconds or longer at now. Pure.
func pastActiveDeadline(pod *corev1.Pod, status corev1.PodStatus, now time.Time) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil || status.StartTime == nil || status.StartTime.IsZero() {
		return false
	}
	return now.Sub(status.StartTime.Time) >= time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second
}

// pastDeadline is pastActiveDeadline with the status the kubelet last computed (or the API's).
func (k *Kubelet) pastDeadline(pod *corev1.Pod) bool {
	status, ok := k.statusManager.GetPodStatus(pod.UID)
	if !ok {
		status = pod.Status
	}
	return pastActiveDeadline(pod, status, k.clock.Now())
}

// shouldEvict is upstream's activeDeadlineHandler.ShouldEvict: a pod past its deadline is to be
// failed, and an Event says so.
func (k *Kubelet) shouldEvict(pod *corev1.Pod) *podEviction {
	if !k.pastDeadline(pod) {
		return nil
	}
	k.recorder.Eventf(pod, corev1.EventTypeNormal, reasonDeadlineExceeded, messageDeadlineExceeded)
	return &podEviction{reason: reasonDeadlineExceeded, message: messageDeadlineExceeded}
}

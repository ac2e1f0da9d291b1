package podworkers

import (
	corev1 "k8s.io/api/core/v1"
)

// The pure decisions of UpdatePod: which state an update leads to, and with which grace period.

// gracePeriodFor is the grace period to kill a pod with: the override if given, else the deletion
// grace period, else the spec's terminationGracePeriodSeconds, else 30 s. Pure.
func gracePeriodFor(pod *corev1.Pod, override *int64) int64 {
	switch {
	case override != nil:
		return max(*override, 0)
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return 30
}

// nextState decides the state after an update arrives (upstream: UpdatePod's "is the pod
// terminating" checks). A kill, a deletion timestamp, or a terminal phase all start terminating;
// nothing goes back. Pure.
func nextState(current State, update UpdatePodOptions) State {
	if current != Syncing {
		return current
	}
	p := update.Pod
	if update.UpdateType == SyncPodKill || p.DeletionTimestamp != nil ||
		p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return Terminating
	}
	return Syncing
}

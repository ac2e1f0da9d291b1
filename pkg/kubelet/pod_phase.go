package kubelet

// A pod's phase and conditions, from its container statuses (upstream: kubelet_pods.go getPhase;
// status/generate.go).

import (
	corev1 "k8s.io/api/core/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

// podPhase is upstream's getPhase. Pending while an init container has not succeeded (or, before
// the pod was initialized, a sidecar has not started) or a container has not started; Failed at
// once when an init container failed and will not be restarted; Running while any container
// runs; once all regular containers stopped for good: Succeeded if all exited 0, else Failed
// (sidecars do not count). initialized: a regular container ran in the current sandbox.
func podPhase(pod *corev1.Pod, st *corev1.PodStatus, initialized bool) corev1.PodPhase {
	restarts := func(exitCode int32) bool {
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyNever:
			return false
		case corev1.RestartPolicyOnFailure:
			return exitCode != 0
		}
		return true
	}
	pendingInit, pendingSidecars, initFailedForGood := 0, 0, false
	var unknown, running, waiting, stopped, stoppedForGood, succeeded int
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs, ok := findStatus(st.InitContainerStatuses, c.Name)
		sidecar := kubecontainer.IsRestartableInitContainer(c)
		switch {
		case !ok:
			if sidecar {
				unknown++
			} else {
				pendingInit++
			}
		case sidecar && cs.State.Running != nil:
			running++
			if cs.Started == nil || !*cs.Started {
				pendingSidecars++
			}
		case sidecar && (cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil):
			// a stopped sidecar does not count for the phase
		case sidecar:
			pendingSidecars++
			waiting++
		case cs.State.Running != nil:
			pendingInit++
		case cs.State.Terminated != nil:
			if code := cs.State.Terminated.ExitCode; code != 0 && !restarts(code) {
				initFailedForGood = true
			}
		case cs.LastTerminationState.Terminated != nil: // waiting to be restarted
			if code := cs.LastTerminationState.Terminated.ExitCode; code != 0 && !restarts(code) {
				initFailedForGood = true
			}
		default:
			pendingInit++
		}
	}
	for i := range pod.Spec.Containers {
		cs, ok := findStatus(st.ContainerStatuses, pod.Spec.Containers[i].Name)
		var exit *corev1.ContainerStateTerminated
		switch {
		case !ok:
			unknown++
			continue
		case cs.State.Running != nil:
			running++
			continue
		case cs.State.Terminated != nil:
			exit = cs.State.Terminated
		case cs.LastTerminationState.Terminated != nil: // between restarts: it has run
			exit = cs.LastTerminationState.Terminated
		default:
			waiting++
			continue
		}
		stopped++
		if !restarts(exit.ExitCode) {
			stoppedForGood++
		}
		if exit.ExitCode == 0 {
			succeeded++
		}
	}
	switch {
	case initFailedForGood:
		return corev1.PodFailed
	case pendingInit > 0 || (pendingSidecars > 0 && !initialized) || waiting > 0:
		return corev1.PodPending
	case running > 0 && unknown == 0:
		return corev1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if stopped != stoppedForGood {
			return corev1.PodRunning // some will be restarted
		}
		if stopped == succeeded {
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	}
	return corev1.PodPending
}

// podConditions are the conditions the kubelet owns, in upstream's order: sandbox ready,
// initialized, ready, containers ready, scheduled (generated as upstream status/generate.go
// does, in pkg/statusmanager), each with the pod's generation as observedGeneration. Ready reads
// the readiness gates' conditions in st.conditions, so st must already hold the conditions of
// others. Their lastTransitionTime is the status manager's to set. Pure.
func podConditions(pod *corev1.Pod, st *corev1.PodStatus, sandboxReady bool) []corev1.PodCondition {
	return []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: conditionStatus(sandboxReady), ObservedGeneration: pod.Generation},
		statusmanager.InitializedCondition(pod, st),
		statusmanager.PodReadyCondition(pod, st),
		statusmanager.ContainersReadyCondition(pod, st),
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, ObservedGeneration: pod.Generation},
	}
}

func conditionStatus(ok bool) corev1.ConditionStatus {
	if ok {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

func findStatus(statuses []corev1.ContainerStatus, name string) (corev1.ContainerStatus, bool) {
	for _, cs := range statuses {
		if cs.Name == name {
			return cs, true
		}
	}
	return corev1.ContainerStatus{}, false
}

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
// (sidecars do not count). initialized: a regular container ran in the current sandbox. Whether
// an exited container runs again is kubecontainer.ContainerShouldRestart, the runtime's own
// decision (its restart rules, its restartPolicy, the pod's).
func podPhase(pod *corev1.Pod, st *corev1.PodStatus, initialized bool) corev1.PodPhase {
	var n phaseCounts
	n.countInitContainers(pod, st)
	n.countContainers(pod, st)
	switch {
	case n.initFailedForGood:
		return corev1.PodFailed
	case n.pendingInit > 0 || (n.pendingSidecars > 0 && !initialized) || n.waiting > 0:
		return corev1.PodPending
	case n.running > 0 && n.unknown == 0:
		return corev1.PodRunning
	case n.running == 0 && n.stopped > 0 && n.unknown == 0:
		if n.stopped != n.stoppedForGood {
			return corev1.PodRunning // some will be restarted
		}
		if n.stopped == n.succeeded {
			return corev1.PodSucceeded
		}
		return corev1.PodFailed
	}
	return corev1.PodPending
}

// phaseCounts are getPhase's counters of the pod's containers by state.
type phaseCounts struct {
	pendingInit, pendingSidecars int
	initFailedForGood            bool
	// unknown: no status; stopped: exited (or between restarts); stoppedForGood: of those, the
	// ones that will not run again.
	unknown, running, waiting, stopped, stoppedForGood, succeeded int
}

// countInitContainers counts the regular init containers (pending, or failed for good) and the
// sidecars (running, waiting, not yet started; a stopped sidecar does not count).
func (n *phaseCounts) countInitContainers(pod *corev1.Pod, st *corev1.PodStatus) {
	failedForGood := func(c *corev1.Container, exit *corev1.ContainerStateTerminated) bool {
		return exit.ExitCode != 0 && !kubecontainer.ContainerShouldRestart(c, &pod.Spec, exit.ExitCode)
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs, ok := findStatus(st.InitContainerStatuses, c.Name)
		sidecar := kubecontainer.IsRestartableInitContainer(c)
		switch {
		case !ok:
			if sidecar {
				n.unknown++
			} else {
				n.pendingInit++
			}
		case sidecar && cs.State.Running != nil:
			n.running++
			if cs.Started == nil || !*cs.Started {
				n.pendingSidecars++
			}
		case sidecar && (cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil):
			// a stopped sidecar does not count for the phase
		case sidecar:
			n.pendingSidecars++
			n.waiting++
		case cs.State.Running != nil:
			n.pendingInit++
		case cs.State.Terminated != nil:
			n.initFailedForGood = n.initFailedForGood || failedForGood(c, cs.State.Terminated)
		case cs.LastTerminationState.Terminated != nil: // waiting to be restarted
			n.initFailedForGood = n.initFailedForGood || failedForGood(c, cs.LastTerminationState.Terminated)
		default:
			n.pendingInit++
		}
	}
}

// countContainers counts the regular containers: unknown, running, waiting, and the stopped ones
// with how many of them will not run again and how many exited 0.
func (n *phaseCounts) countContainers(pod *corev1.Pod, st *corev1.PodStatus) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs, ok := findStatus(st.ContainerStatuses, c.Name)
		var exit *corev1.ContainerStateTerminated
		switch {
		case !ok:
			n.unknown++
			continue
		case cs.State.Running != nil:
			n.running++
			continue
		case cs.State.Terminated != nil:
			exit = cs.State.Terminated
		case cs.LastTerminationState.Terminated != nil: // between restarts: it has run
			exit = cs.LastTerminationState.Terminated
		default:
			n.waiting++
			continue
		}
		n.stopped++
		if !kubecontainer.ContainerShouldRestart(c, &pod.Spec, exit.ExitCode) {
			n.stoppedForGood++
		}
		if exit.ExitCode == 0 {
			n.succeeded++
		}
	}
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

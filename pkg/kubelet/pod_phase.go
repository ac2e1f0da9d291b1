package kubelet

// A pod's phase and conditions, from its container statuses (upstream: kubelet_pods.go getPhase;
// status/generate.go).

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
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
		sidecar := kuberuntime.IsSidecar(c)
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

// Condition reasons (upstream status/generate.go).
const (
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonPodCompleted             = "PodCompleted"
	reasonPodFailed                = "PodFailed"
)

// podConditions are the conditions the kubelet owns, in upstream's order: sandbox ready,
// initialized, ready, containers ready, scheduled. Each keeps its lastTransitionTime unless its
// status changes. Pure.
func podConditions(pod *corev1.Pod, st *corev1.PodStatus, sandboxReady bool, now time.Time) []corev1.PodCondition {
	old := pod.Status
	initialized := initializedCondition(pod, st)
	containersReady := containersReadyCondition(pod, st)
	ready := containersReady
	ready.Type = corev1.PodReady
	return []corev1.PodCondition{
		withTransition(old, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: conditionStatus(sandboxReady)}, now),
		withTransition(old, initialized, now),
		withTransition(old, ready, now),
		withTransition(old, containersReady, now),
		withTransition(old, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, now),
	}
}

// containersReadyCondition is True when every container and sidecar is ready; a terminal pod's
// is False with reason PodCompleted or PodFailed (upstream GenerateContainersReadyCondition).
func containersReadyCondition(pod *corev1.Pod, st *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse}
	switch st.Phase {
	case corev1.PodSucceeded:
		c.Reason = reasonPodCompleted
		return c
	case corev1.PodFailed:
		c.Reason = reasonPodFailed
		return c
	}
	var unknown, unready []string
	check := func(statuses []corev1.ContainerStatus, name string) {
		if cs, ok := findStatus(statuses, name); !ok {
			unknown = append(unknown, name)
		} else if !cs.Ready {
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if kuberuntime.IsSidecar(&pod.Spec.InitContainers[i]) {
			check(st.InitContainerStatuses, pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(st.ContainerStatuses, pod.Spec.Containers[i].Name)
	}
	if msg := notReadyMessage(unknown, "unknown", unready, "unready"); msg != "" {
		c.Reason, c.Message = reasonContainersNotReady, msg
		return c
	}
	c.Status = corev1.ConditionTrue
	return c
}

// initializedCondition is True once every init container succeeded and every sidecar started,
// or once a regular container has run (upstream GeneratePodInitializedCondition).
func initializedCondition(pod *corev1.Pod, st *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		cs, ok := findStatus(st.InitContainerStatuses, ic.Name)
		switch {
		case !ok:
			unknown = append(unknown, ic.Name)
		case kuberuntime.IsSidecar(ic) && (cs.Started == nil || !*cs.Started):
			incomplete = append(incomplete, ic.Name)
		case !kuberuntime.IsSidecar(ic) && !cs.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	if st.Phase == corev1.PodSucceeded && len(unknown) == 0 {
		c.Reason = reasonPodCompleted
		return c
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return c // a regular container has started: initialized before
		}
	}
	if msg := notReadyMessage(unknown, "unknown", incomplete, "incomplete"); msg != "" {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, reasonContainersNotInitialized, msg
	}
	return c
}

// notReadyMessage is upstream's "containers with unknown status: [a], containers with unready
// status: [b]".
func notReadyMessage(first []string, firstWord string, second []string, secondWord string) string {
	var parts []string
	if len(first) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %s", firstWord, first))
	}
	if len(second) > 0 {
		parts = append(parts, fmt.Sprintf("containers with %s status: %s", secondWord, second))
	}
	return strings.Join(parts, ", ")
}

// withTransition stamps c with now as its lastTransitionTime, unless the old status had it with
// the same status, whose time it keeps.
func withTransition(old corev1.PodStatus, c corev1.PodCondition, now time.Time) corev1.PodCondition {
	c.LastTransitionTime = metav1.Time{Time: now.Truncate(time.Second)}
	for _, prev := range old.Conditions {
		if prev.Type == c.Type && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	return c
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

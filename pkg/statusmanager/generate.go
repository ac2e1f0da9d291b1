package statusmanager

// The conditions the kubelet owns, and what a pod's status looks like once it has ended
// (upstream: pkg/kubelet/status/generate.go; status_manager.go TerminatePod).

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Condition reasons (upstream status/generate.go).
const (
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonPodCompleted             = "PodCompleted"
	ReasonPodFailed                = "PodFailed"
)

// ContainersReadyCondition is True when every container and sidecar of pod is ready in status;
// a terminal pod's is False with reason PodCompleted or PodFailed; otherwise False with
// ContainersNotReady and a message naming the containers (upstream
// GenerateContainersReadyCondition). The Ready condition is the same without readiness gates.
// Its lastTransitionTime is left for the status manager to set. Pure.
func ContainersReadyCondition(pod *corev1.Pod, status *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse}
	switch status.Phase {
	case corev1.PodSucceeded:
		c.Reason = ReasonPodCompleted
		return c
	case corev1.PodFailed:
		c.Reason = ReasonPodFailed
		return c
	}
	var unknown, unready []string
	check := func(statuses []corev1.ContainerStatus, name string) {
		if cs := findStatus(statuses, name); cs == nil {
			unknown = append(unknown, name)
		} else if !cs.Ready {
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			check(status.InitContainerStatuses, pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(status.ContainerStatuses, pod.Spec.Containers[i].Name)
	}
	if msg := notReadyMessage(unknown, "unknown", unready, "unready"); msg != "" {
		c.Reason, c.Message = ReasonContainersNotReady, msg
		return c
	}
	c.Status = corev1.ConditionTrue
	return c
}

// PodReadyCondition is the Ready condition: ContainersReady under another name (minikubelet has
// no readiness gates).
func PodReadyCondition(pod *corev1.Pod, status *corev1.PodStatus) corev1.PodCondition {
	c := ContainersReadyCondition(pod, status)
	c.Type = corev1.PodReady
	return c
}

// InitializedCondition is True once every init container succeeded and every sidecar started,
// or once a regular container has run; otherwise False with ContainersNotInitialized (upstream
// GeneratePodInitializedCondition). Pure.
func InitializedCondition(pod *corev1.Pod, status *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		cs := findStatus(status.InitContainerStatuses, ic.Name)
		sidecar := kubecontainer.IsRestartableInitContainer(ic)
		switch {
		case cs == nil:
			unknown = append(unknown, ic.Name)
		case sidecar && (cs.Started == nil || !*cs.Started), !sidecar && !cs.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	if status.Phase == corev1.PodSucceeded && len(unknown) == 0 {
		c.Reason = ReasonPodCompleted
		return c
	}
	for _, cs := range status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return c // a regular container has started: initialized before
		}
	}
	if msg := notReadyMessage(unknown, "unknown", incomplete, "incomplete"); msg != "" {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, ReasonContainersNotInitialized, msg
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

// TerminatedStatus is status at the end of pod's life (upstream TerminatePod): containers that
// never reported an end become terminated with reason ContainerStatusUnknown and exit code 137
// (we do not know how they ended, so they must not look successful) — every regular container
// once the pod was initialized, and the init containers up to the last one that started; the
// phase becomes Failed unless it is already Succeeded or Failed; ContainersReady and Ready become
// False. Pure: status is not changed.
func TerminatedStatus(pod *corev1.Pod, status corev1.PodStatus) corev1.PodStatus {
	status = *status.DeepCopy()
	unknownEnd := func(cs *corev1.ContainerStatus) {
		cs.Ready = false
		if cs.State.Terminated != nil {
			return
		}
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: reasonStatusUnknown, Message: messageStatusUnknown, ExitCode: exitCodeUnknown}}
	}
	if initialized(pod, &status) {
		for i := range status.ContainerStatuses {
			unknownEnd(&status.ContainerStatuses[i])
		}
	}
	lastStarted := -1
	for i, cs := range status.InitContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
			lastStarted = i
		}
	}
	for i := 0; i <= lastStarted; i++ {
		unknownEnd(&status.InitContainerStatuses[i])
	}
	if status.Phase != corev1.PodSucceeded {
		status.Phase = corev1.PodFailed
	}
	// A terminal pod is never ready (upstream mergePodStatus, https://issues.k8s.io/108594).
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		c := ContainersReadyCondition(pod, &status)
		c.Type = t
		status.Conditions = setCondition(status.Conditions, c)
	}
	return status
}

// initialized reports whether pod got past its init containers: it has none, its Initialized
// condition is True, or a regular container has started (upstream hasPodInitialized).
func initialized(pod *corev1.Pod, status *corev1.PodStatus) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	if c := findCondition(status.Conditions, corev1.PodInitialized); c != nil && c.Status == corev1.ConditionTrue {
		return true
	}
	for _, cs := range status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
			return true
		}
	}
	return false
}

// findStatus returns the status of the named container in statuses, or nil.
func findStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

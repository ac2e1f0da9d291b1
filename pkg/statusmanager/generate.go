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
	ReasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
	ReasonPodCompleted             = "PodCompleted"
	ReasonPodFailed                = "PodFailed"
)

// PodConditionByKubelet reports whether the kubelet owns conditions of type t: it computes them
// on every sync and its value wins. Every other type (a readiness gate's, a controller's
// DisruptionTarget) belongs to someone else: the kubelet keeps it as the API has it. Upstream
// kubetypes.PodConditionByKubelet, with the types whose feature gates are on by default in v1.36
// (PodReadyToStartContainers, AllContainersRestarting); minikubelet never writes the resize ones
// or AllContainersRestarting, but owns them as upstream does.
func PodConditionByKubelet(t corev1.PodConditionType) bool {
	switch t {
	case corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized, corev1.ContainersReady,
		corev1.PodResizeInProgress, corev1.PodResizePending,
		corev1.PodReadyToStartContainers, corev1.AllContainersRestarting:
		return true
	}
	return false
}

// ContainersReadyCondition is True when every container and sidecar of pod is ready in status;
// a terminal pod's is False with reason PodCompleted or PodFailed; otherwise False with
// ContainersNotReady and a message naming the containers (upstream
// GenerateContainersReadyCondition). Like every condition the kubelet sets, it carries the pod's
// generation as its observedGeneration (PodObservedGenerationTracking, GA and locked on since
// v1.35). Its lastTransitionTime is left for the status manager to set. Pure.
func ContainersReadyCondition(pod *corev1.Pod, status *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, ObservedGeneration: pod.Generation}
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

// PodReadyCondition is the Ready condition: ContainersReady under another name while that is not
// True; then True only if every readiness gate of pod.spec.readinessGates names a condition in
// status.conditions whose status is True, else False with ReadinessGatesNotReady and a message
// per gate (upstream GeneratePodReadyCondition). status.conditions must already hold the
// conditions others set (the API's), as generateAPIPodStatus puts them first. Pure.
func PodReadyCondition(pod *corev1.Pod, status *corev1.PodStatus) corev1.PodCondition {
	c := ContainersReadyCondition(pod, status)
	c.Type = corev1.PodReady
	if c.Status != corev1.ConditionTrue {
		return c
	}
	var unready []string
	for _, gate := range pod.Spec.ReadinessGates {
		switch gc := findCondition(status.Conditions, gate.ConditionType); {
		case gc == nil:
			unready = append(unready, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", gate.ConditionType))
		case gc.Status != corev1.ConditionTrue:
			unready = append(unready, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", gate.ConditionType, gc.Status))
		}
	}
	if len(unready) > 0 {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, ReasonReadinessGatesNotReady, strings.Join(unready, ", ")
	}
	return c
}

// NeedToReconcilePodReadiness reports whether the Ready condition in pod's API status is not what
// its readiness gates and container statuses there say, because someone else changed a gate's
// condition: the kubelet must sync the pod to write Ready again. Only pods with readiness gates
// and a Ready condition qualify (upstream status_manager.go NeedToReconcilePodReadiness). Pure.
func NeedToReconcilePodReadiness(pod *corev1.Pod) bool {
	if len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	current := findCondition(pod.Status.Conditions, corev1.PodReady)
	if current == nil {
		return false
	}
	want := PodReadyCondition(pod, &pod.Status)
	return current.Status != want.Status || current.Message != want.Message
}

// InitializedCondition is True once every init container succeeded and every sidecar started,
// or once a regular container has run; otherwise False with ContainersNotInitialized (upstream
// GeneratePodInitializedCondition). Pure.
func InitializedCondition(pod *corev1.Pod, status *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, ObservedGeneration: pod.Generation}
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

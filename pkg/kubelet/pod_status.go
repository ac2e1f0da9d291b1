package kubelet

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// statusInputs is what generateAPIPodStatus needs besides the pod and the runtime's view.
type statusInputs struct {
	nodeIP      string
	runtimeName string                                // prefix of containerIDs, e.g. "containerd"
	reasons     map[string]kuberuntime.ContainerError // why a container is waiting (last sync)
	now         time.Time
}

// generateAPIPodStatus turns the runtime's view of a pod into the API's PodStatus: phase,
// conditions, container statuses, IPs, start time (upstream: kubelet_pods.go
// generateAPIPodStatus, convertToAPIContainerStatuses, getPhase). Pure.
func generateAPIPodStatus(pod *corev1.Pod, rs *kubecontainer.PodStatus, in statusInputs) corev1.PodStatus {
	old := pod.Status
	st := corev1.PodStatus{
		QOSClass: old.QOSClass,
		HostIP:   in.nodeIP,
		HostIPs:  []corev1.HostIP{{IP: in.nodeIP}},
	}
	st.StartTime = old.StartTime
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: in.now.Truncate(time.Second)}
	}
	ips := rs.IPs
	if pod.Spec.HostNetwork {
		ips = []string{in.nodeIP}
	}
	if len(ips) > 0 {
		st.PodIP = ips[0]
		for _, ip := range ips {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
		}
	}

	for i := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(&pod.Spec.Containers[i], rs, in, old))
	}
	st.Phase = podPhase(pod, st.ContainerStatuses)
	// A terminal phase never goes back (the API server refuses it, and so do we).
	if old.Phase == corev1.PodSucceeded || old.Phase == corev1.PodFailed {
		st.Phase = old.Phase
	}

	allReady := len(st.ContainerStatuses) > 0
	for _, cs := range st.ContainerStatuses {
		allReady = allReady && cs.Ready
	}
	sandboxReady := false
	for _, s := range rs.Sandboxes {
		sandboxReady = sandboxReady || s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
	}
	ready := allReady && st.Phase == corev1.PodRunning
	st.Conditions = []corev1.PodCondition{
		podCondition(old, corev1.PodReadyToStartContainers, sandboxReady, "", in.now),
		podCondition(old, corev1.PodInitialized, true, "", in.now),
		podCondition(old, corev1.ContainersReady, ready, notReadyReason(ready), in.now),
		podCondition(old, corev1.PodReady, ready, notReadyReason(ready), in.now),
		podCondition(old, corev1.PodScheduled, true, "", in.now),
	}
	return st
}

func notReadyReason(ready bool) string {
	if ready {
		return ""
	}
	return "ContainersNotReady"
}

// podCondition keeps the condition's lastTransitionTime unless its status changes.
func podCondition(old corev1.PodStatus, typ corev1.PodConditionType, ok bool, reason string, now time.Time) corev1.PodCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	c := corev1.PodCondition{Type: typ, Status: status, Reason: reason, LastTransitionTime: metav1.Time{Time: now.Truncate(time.Second)}}
	for _, prev := range old.Conditions {
		if prev.Type == typ && prev.Status == status {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	return c
}

// containerStatus is the API status of one container: its newest instance's state, the previous
// instance as lastState, or waiting with the reason the last sync gave.
func containerStatus(c *corev1.Container, rs *kubecontainer.PodStatus, in statusInputs, old corev1.PodStatus) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
	var instances []*kubecontainer.ContainerStatus
	for _, inst := range rs.Containers {
		if inst.Name == c.Name {
			instances = append(instances, inst)
		}
	}
	if len(instances) == 0 {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		for _, prev := range old.ContainerStatuses { // the runtime lost it: keep what we knew
			if prev.Name != c.Name {
				continue
			}
			if prev.State.Terminated != nil {
				// It ended and the runtime lost it (a restarted kubelet with an empty runtime, GC):
				// that stays true until a new instance runs, and the API server refuses a
				// terminated container of a Never pod going back to waiting. Upstream:
				// convertToAPIContainerStatuses keeps the old terminated status.
				prev.Ready, prev.Started = false, ptr.To(false)
				return prev
			}
			cs.RestartCount, cs.LastTerminationState = prev.RestartCount, prev.LastTerminationState
		}
	} else {
		latest := instances[0]
		cs.ContainerID = in.runtimeName + "://" + latest.ID
		cs.ImageID = latest.ImageRef
		cs.RestartCount = int32(latest.RestartCount)
		cs.State = containerState(latest, in.runtimeName)
		if len(instances) > 1 {
			cs.LastTerminationState = containerState(instances[1], in.runtimeName)
		}
		cs.Ready = cs.State.Running != nil
		cs.Started = ptr.To(cs.State.Running != nil)
		// An exited container that is to be restarted shows the waiting reason (CrashLoopBackOff…)
		// with the exit as its last state, as `kubectl get pods` shows it.
		if latest.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			if e, ok := in.reasons[c.Name]; ok {
				cs.LastTerminationState = cs.State
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: e.Reason, Message: e.Message}}
			}
		}
	}
	if cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating" {
		if e, ok := in.reasons[c.Name]; ok {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: e.Reason, Message: e.Message}
		}
	}
	return cs
}

func containerState(c *kubecontainer.ContainerStatus, runtimeName string) corev1.ContainerState {
	switch c.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: c.StartedAt.Truncate(time.Second)}}}
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		reason := c.Reason
		if reason == "" {
			reason = "Completed"
			if c.ExitCode != 0 {
				reason = "Error"
			}
		}
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: c.ExitCode, Reason: reason, Message: c.Message,
			StartedAt:   metav1.Time{Time: c.StartedAt.Truncate(time.Second)},
			FinishedAt:  metav1.Time{Time: c.FinishedAt.Truncate(time.Second)},
			ContainerID: runtimeName + "://" + c.ID,
		}}
	default:
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
}

// podPhase is upstream's getPhase for pods without init containers: Pending while a container has
// not started, Running while any runs (or will be restarted), and, once all have stopped for
// good, Succeeded if all exited 0, else Failed.
func podPhase(pod *corev1.Pod, statuses []corev1.ContainerStatus) corev1.PodPhase {
	var running, waiting, stopped, succeeded int
	for _, cs := range statuses {
		switch {
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil && cs.LastTerminationState.Terminated != nil:
			stopped++ // between restarts: it has run
			if cs.LastTerminationState.Terminated.ExitCode == 0 {
				succeeded++
			}
		default:
			waiting++
		}
	}
	switch {
	case waiting > 0:
		return corev1.PodPending
	case running > 0:
		return corev1.PodRunning
	case stopped > 0:
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyAlways:
			return corev1.PodRunning // they will be restarted
		case corev1.RestartPolicyOnFailure:
			if stopped == succeeded {
				return corev1.PodSucceeded
			}
			return corev1.PodRunning
		default:
			if stopped == succeeded {
				return corev1.PodSucceeded
			}
			return corev1.PodFailed
		}
	}
	return corev1.PodPending
}

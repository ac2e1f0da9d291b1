package kuberuntime

import (
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// PodActions is what SyncPod must do to bring the runtime in line with a pod's spec (upstream:
// kuberuntime_manager.go podActions).
type PodActions struct {
	// KillPod: stop every container and the sandbox (before a new sandbox, or when nothing is
	// left to run).
	KillPod bool
	// CreateSandbox: make a new sandbox, with this Attempt (0 for the first). Without it, Attempt
	// is the reused sandbox's: the sandbox config sent with CreateContainer must match it.
	CreateSandbox bool
	Attempt       uint32
	// SandboxID is the sandbox to start containers in when no new one is created.
	SandboxID string
	// ContainersToStart are indexes into pod.Spec.Containers.
	ContainersToStart []int
	// ContainersToKill are running container instances to stop, by ID, with the reason.
	ContainersToKill map[string]KillReason
}

// KillReason says why a running container is stopped.
type KillReason struct {
	Name    string
	Message string
}

// computePodActions decides, from the pod's spec and what the runtime has, what to do. It is a
// pure function; SyncPod carries the result out. Simplified from upstream: no init or sidecar
// containers, no probes, no in-place resize.
func computePodActions(pod *corev1.Pod, status *kubecontainer.PodStatus) PodActions {
	actions := PodActions{ContainersToKill: map[string]KillReason{}}
	createSandbox, attempt, sandboxID := sandboxChanged(pod, status)
	if createSandbox {
		// A pod that must not restart and has run before stays dead: no new sandbox.
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && attempt != 0 && len(status.Containers) != 0 {
			actions.KillPod = true
			return actions
		}
		actions.KillPod, actions.CreateSandbox, actions.Attempt = true, true, attempt
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			if pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && succeeded(status.FindContainer(c.Name)) {
				continue
			}
			actions.ContainersToStart = append(actions.ContainersToStart, i)
		}
		return actions
	}
	actions.SandboxID, actions.Attempt = sandboxID, attempt

	inSpec := map[string]bool{}
	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		inSpec[c.Name] = true
		cs := status.FindContainer(c.Name)
		if cs == nil || cs.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			if shouldRestart(pod, cs) {
				actions.ContainersToStart = append(actions.ContainersToStart, i)
			}
			continue
		}
		if cs.Hash != HashContainer(c) {
			actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Message: "Container definition changed, will be restarted"}
			actions.ContainersToStart = append(actions.ContainersToStart, i)
			continue
		}
		keep++
	}
	for _, cs := range status.Containers {
		if cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING && !inSpec[cs.Name] {
			actions.ContainersToKill[cs.ID] = KillReason{Name: cs.Name, Message: "Container is not in the pod spec"}
		}
	}
	// Nothing runs and nothing will: stop the sandbox too (the pod is done, or being deleted).
	if keep == 0 && len(actions.ContainersToStart) == 0 {
		actions.KillPod = true
	}
	return actions
}

// sandboxChanged reports whether the pod needs a new sandbox, the attempt number to give it, and
// otherwise the ID of the sandbox to use (upstream: podSandboxChanged).
func sandboxChanged(pod *corev1.Pod, status *kubecontainer.PodStatus) (bool, uint32, string) {
	if len(status.Sandboxes) == 0 {
		return true, 0, ""
	}
	ready := 0
	for _, s := range status.Sandboxes {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
	}
	latest := status.Sandboxes[0]
	next := latest.GetMetadata().GetAttempt() + 1
	switch {
	case ready > 1: // more than one ready sandbox: start over with one
		return true, next, latest.GetId()
	case latest.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY: // died
		return true, next, latest.GetId()
	case hostNetwork(latest) != pod.Spec.HostNetwork: // network mode changed
		return true, next, ""
	case !pod.Spec.HostNetwork && latest.GetNetwork().GetIp() == "": // no network: retry
		return true, next, latest.GetId()
	}
	return false, latest.GetMetadata().GetAttempt(), latest.GetId()
}

func hostNetwork(s *runtimeapi.PodSandboxStatus) bool {
	return s.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// shouldRestart decides whether a container that is not running should be started (again):
// never during deletion; always if it never ran; otherwise by restartPolicy (upstream:
// kubecontainer.ShouldContainerBeRestarted).
func shouldRestart(pod *corev1.Pod, cs *kubecontainer.ContainerStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if cs == nil || cs.State == runtimeapi.ContainerState_CONTAINER_CREATED || cs.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN {
		return true
	}
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return cs.ExitCode != 0
	default:
		return true
	}
}

func succeeded(cs *kubecontainer.ContainerStatus) bool {
	return cs != nil && cs.State == runtimeapi.ContainerState_CONTAINER_EXITED && cs.ExitCode == 0
}

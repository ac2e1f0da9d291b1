package kuberuntime

// What the init containers and sidecars need, computePodActions' third step (upstream:
// kuberuntime_container.go computeInitContainerActions).

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// computeInitContainerActions adds to actions what the init containers need: the next one to
// run, a failed one to restart (or, when it will not run again, the pod to kill), sidecars to
// (re)start in order. It returns whether the pod is initialized: every init container has
// succeeded, or (sidecars) started. Init containers are looked at last first, because completed
// ones may have been removed from the runtime: the latest one that ran tells where we are.
func computeInitContainerActions(pod *corev1.Pod, status *kubecontainer.PodStatus, probes ProbeResults, actions *PodActions) bool {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	w := initWalk{pod: pod, status: status, probes: probes, actions: actions, last: len(inits) - 1}
	// A regular container that was created or runs means initialization finished at some point.
	for i := range pod.Spec.Containers {
		if cs := status.FindContainer(pod.Spec.Containers[i].Name); cs != nil &&
			(cs.State == runtimeapi.ContainerState_CONTAINER_CREATED || cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING) {
			w.initialized = true
			break
		}
	}
	w.previouslyDone = w.initialized
	for i := w.last; i >= 0; i-- {
		c := &inits[i]
		sidecar := kubecontainer.IsRestartableInitContainer(c)
		cs := status.FindContainer(c.Name)
		if cs == nil {
			// Once initialized, a sidecar whose instance is gone is started again.
			if w.previouslyDone && sidecar {
				w.toStart = append(w.toStart, i)
			}
			continue
		}
		if w.previouslyDone && !sidecar {
			continue // after initialization only sidecars are kept running
		}
		switch cs.State {
		case runtimeapi.ContainerState_CONTAINER_CREATED:
			w.toStart = append(w.toStart, i) // created but never started: start it
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			if sidecar {
				w.runningSidecar(i, c, cs)
			} // a regular init container still running: wait for it
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			if !w.exited(i, c, cs, sidecar) {
				return false
			}
		default:
			if !w.unknown(i, c, cs, sidecar) {
				return false
			}
		}
		w.previouslyDone = true
	}
	if !w.previouslyDone {
		w.toStart = append(w.toStart, 0) // none has run yet: the first one
	}
	for i := len(w.toStart) - 1; i >= 0; i-- { // into spec order
		actions.InitContainersToStart = append(actions.InitContainersToStart, w.toStart[i])
	}
	return w.initialized
}

// initWalk is computeInitContainerActions' walk over the init containers, last first.
type initWalk struct {
	pod     *corev1.Pod
	status  *kubecontainer.PodStatus
	probes  ProbeResults
	actions *PodActions
	last    int // index of the last init container
	// toStart collects init containers to start, last first.
	toStart []int
	// initialized: the pod got past its init containers.
	initialized bool
	// previouslyDone: every init container before the one looked at has done its part.
	previouslyDone bool
}

// runningSidecar: a running sidecar lets the next init container go once started (its startup
// probe succeeded, or it has none); a failed startup or liveness probe or a changed spec kills
// it and starts it again.
func (w *initWalk) runningSidecar(i int, c *corev1.Container, cs *kubecontainer.ContainerStatus) {
	if c.StartupProbe != nil {
		r, found := w.probes.Startup(cs.ID)
		if !found || r == ProbeUnknown {
			return // the next init container waits for this sidecar's startup probe
		}
		if r == ProbeFailure {
			w.actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "StartupProbe",
				Message: fmt.Sprintf("Init container %s failed startup probe", c.Name)}
			w.toStart = append(w.toStart, i)
			return
		}
	}
	if i == w.last {
		w.initialized = true
	} else if !w.previouslyDone {
		w.toStart = append(w.toStart, i+1) // started for the first time: the next one may go
	}
	if cs.Hash != HashContainer(c) {
		w.actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Message: fmt.Sprintf("Init container %s definition changed", c.Name)}
		w.toStart = append(w.toStart, i)
	} else if r, found := w.probes.Liveness(cs.ID); c.LivenessProbe != nil && found && r == ProbeFailure {
		w.actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "LivenessProbe",
			Message: fmt.Sprintf("Init container %s failed liveness probe", c.Name)}
		w.toStart = append(w.toStart, i)
	}
}

// exited: a sidecar is restarted whenever it exits; a failed init container is restarted when
// kubecontainer.ShouldContainerBeRestarted says so (its restart rules, its restartPolicy, the
// pod's), else the pod fails (false); one that succeeded lets the next one go.
func (w *initWalk) exited(i int, c *corev1.Container, cs *kubecontainer.ContainerStatus, sidecar bool) bool {
	switch {
	case sidecar:
		w.toStart = append(w.toStart, i)
	case cs.ExitCode != 0 || cs.Reason == "OOMKilled":
		if !kubecontainer.ShouldContainerBeRestarted(c, w.pod, w.status) {
			w.failPod()
			return false
		}
		w.toStart = append(w.toStart, i)
	case i == w.last:
		w.initialized = true
	default:
		w.toStart = append(w.toStart, i+1) // it succeeded: the next one
	}
	return true
}

// unknown: an init container in an unknown state is killed and started again, unless it is not a
// sidecar and its restartPolicy (or else the pod's) is Never: then the pod fails (false). Restart
// rules are not read: there is no exit code.
func (w *initWalk) unknown(i int, c *corev1.Container, cs *kubecontainer.ContainerStatus, sidecar bool) bool {
	if !sidecar && !kubecontainer.RestartsWithoutExitCode(c, &w.pod.Spec) {
		w.failPod()
		return false
	}
	w.actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "Unknown",
		Message: fmt.Sprintf("Init container is in %q state, try killing it before restart", "unknown")}
	w.toStart = append(w.toStart, i)
	return true
}

// failPod: an init container failed for good; the pod is killed and nothing starts.
func (w *initWalk) failPod() {
	w.actions.KillPod, w.actions.InitContainersToStart = true, nil
}

package kuberuntime

// What SyncPod must do, decided by pure functions (upstream: kuberuntime_manager.go
// computePodActions, kuberuntime_container.go computeInitContainerActions).

import (
	"fmt"

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
	// InitContainersToStart are indexes into pod.Spec.InitContainers, in spec order: the next
	// init container to run, and sidecars (restartable init containers) to (re)start.
	InitContainersToStart []int
	// ContainersToStart are indexes into pod.Spec.Containers.
	ContainersToStart []int
	// EphemeralContainersToStart are indexes into pod.Spec.EphemeralContainers: those the runtime
	// has never had (an ephemeral container runs once and is never restarted).
	EphemeralContainersToStart []int
	// ContainersToKill are running container instances to stop, by ID, with the reason.
	ContainersToKill map[string]KillReason
}

// KillReason says why a running container is stopped.
type KillReason struct {
	Name    string
	Message string
	// Reason is the probe that failed ("LivenessProbe", "StartupProbe"), "Unknown" for a
	// container in an unknown state, or "" (upstream: containerKillReason).
	Reason string
}

// ProbeResult is what a probe last found (pkg/prober's results, as computePodActions sees them).
type ProbeResult int

const (
	ProbeUnknown ProbeResult = iota
	ProbeSuccess
	ProbeFailure
)

// ProbeResults tells computePodActions what the liveness and startup probes of a container last
// found: the result and true, or false before the first result. containerID is the runtime's
// bare ID. It must not block.
type ProbeResults interface {
	Liveness(containerID string) (ProbeResult, bool)
	Startup(containerID string) (ProbeResult, bool)
}

// noProbes is ProbeResults when no prober is wired: no result is ever found.
type noProbes struct{}

func (noProbes) Liveness(string) (ProbeResult, bool) { return ProbeUnknown, false }
func (noProbes) Startup(string) (ProbeResult, bool)  { return ProbeUnknown, false }

// computePodActions decides, from the pod's spec, what the runtime has and what the probes found,
// what to do. It is a pure function; SyncPod carries the result out. Simplified from upstream:
// no in-place resize, no container restart rules.
func computePodActions(pod *corev1.Pod, status *kubecontainer.PodStatus, probes ProbeResults) PodActions {
	actions := PodActions{ContainersToKill: map[string]KillReason{}}
	createSandbox, attempt, sandboxID := sandboxChanged(pod, status)
	if createSandbox {
		actions.KillPod = true
		// A pod that must not restart and has run before stays dead: no new sandbox.
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && attempt != 0 && len(status.Containers) != 0 {
			return actions
		}
		var toStart []int
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			if pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && succeeded(status.FindContainer(c.Name)) {
				continue
			}
			toStart = append(toStart, i)
		}
		// Initialized once and nothing left to run: the pod is done, no sandbox for it.
		if len(toStart) == 0 && anyRegularContainerCreated(pod, status) {
			return actions
		}
		actions.CreateSandbox, actions.Attempt = true, attempt
		// A new sandbox starts from the beginning: the first init container, alone.
		if len(pod.Spec.InitContainers) > 0 {
			actions.InitContainersToStart = []int{0}
			return actions
		}
		actions.ContainersToStart = toStart
		return actions
	}
	actions.SandboxID, actions.Attempt = sandboxID, attempt

	// Ephemeral containers (kubectl debug) start in a running sandbox, even before the pod is
	// initialized — a debugger for a failing init container — and never again once they ran.
	for i := range pod.Spec.EphemeralContainers {
		if status.FindContainer(pod.Spec.EphemeralContainers[i].Name) == nil {
			actions.EphemeralContainersToStart = append(actions.EphemeralContainersToStart, i)
		}
	}

	initialized := computeInitContainerActions(pod, status, probes, &actions)
	if actions.KillPod || !initialized {
		return actions // initialization failed for good, or is still going on
	}

	inSpec := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		inSpec[pod.Spec.InitContainers[i].Name] = true
	}
	for i := range pod.Spec.EphemeralContainers {
		inSpec[pod.Spec.EphemeralContainers[i].Name] = true
	}
	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		inSpec[c.Name] = true
		cs := status.FindContainer(c.Name)
		if cs == nil || cs.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			if shouldRestart(pod, c, cs) {
				actions.ContainersToStart = append(actions.ContainersToStart, i)
				if cs != nil && cs.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN {
					actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "Unknown",
						Message: fmt.Sprintf("Container is in %q state, try killing it before restart", "unknown")}
				}
			}
			continue
		}
		// Running: kill it if its spec changed or a probe failed; restart it if the policy says so.
		why := KillReason{Name: c.Name}
		restart := pod.Spec.RestartPolicy != corev1.RestartPolicyNever
		if cs.Hash != HashContainer(c) {
			why.Message, restart = fmt.Sprintf("Container %s definition changed", c.Name), true
		} else if r, ok := probes.Liveness(cs.ID); ok && r == ProbeFailure {
			why.Message, why.Reason = fmt.Sprintf("Container %s failed liveness probe", c.Name), "LivenessProbe"
		} else if r, ok := probes.Startup(cs.ID); ok && r == ProbeFailure {
			why.Message, why.Reason = fmt.Sprintf("Container %s failed startup probe", c.Name), "StartupProbe"
		} else {
			keep++
			continue
		}
		if restart {
			why.Message += ", will be restarted"
			actions.ContainersToStart = append(actions.ContainersToStart, i)
		}
		actions.ContainersToKill[cs.ID] = why
	}
	for _, cs := range status.Containers {
		if cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING && !inSpec[cs.Name] {
			actions.ContainersToKill[cs.ID] = KillReason{Name: cs.Name, Message: "Container is not in the pod spec"}
		}
	}
	// Nothing runs and nothing will: stop the sandbox too (the pod is done, or being deleted).
	// Sidecars and ephemeral containers do not keep a finished pod alive: they are stopped with it.
	if keep == 0 && len(actions.ContainersToStart) == 0 {
		actions.KillPod = true
		actions.InitContainersToStart, actions.EphemeralContainersToStart = nil, nil
	}
	return actions
}

// computeInitContainerActions adds to actions what the init containers need: the next one to
// run, a failed one to restart (or, with restartPolicy Never, the pod to kill), sidecars to
// (re)start in order. It returns whether the pod is initialized: every init container has
// succeeded, or (sidecars) started. Init containers are looked at last first, because completed
// ones may have been removed from the runtime: the latest one that ran tells where we are.
func computeInitContainerActions(pod *corev1.Pod, status *kubecontainer.PodStatus, probes ProbeResults, actions *PodActions) bool {
	inits := pod.Spec.InitContainers
	if len(inits) == 0 {
		return true
	}
	// A regular container that was created or runs means initialization finished at some point.
	initialized := false
	for i := range pod.Spec.Containers {
		if cs := status.FindContainer(pod.Spec.Containers[i].Name); cs != nil &&
			(cs.State == runtimeapi.ContainerState_CONTAINER_CREATED || cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING) {
			initialized = true
			break
		}
	}
	// previouslyDone: every init container before the one looked at has done its part.
	previouslyDone := initialized
	var toStart []int // collected last first
	restartOnFailure := pod.Spec.RestartPolicy != corev1.RestartPolicyNever
	for i := len(inits) - 1; i >= 0; i-- {
		c := &inits[i]
		sidecar := kubecontainer.IsRestartableInitContainer(c)
		cs := status.FindContainer(c.Name)
		if cs == nil {
			// Once initialized, a sidecar whose instance is gone is started again.
			if previouslyDone && sidecar {
				toStart = append(toStart, i)
			}
			continue
		}
		if previouslyDone && !sidecar {
			continue // after initialization only sidecars are kept running
		}
		switch cs.State {
		case runtimeapi.ContainerState_CONTAINER_CREATED:
			toStart = append(toStart, i) // created but never started: start it
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			if !sidecar {
				break // a regular init container still running: wait for it
			}
			if c.StartupProbe != nil {
				r, found := probes.Startup(cs.ID)
				if !found || r == ProbeUnknown {
					break // the next init container waits for this sidecar's startup probe
				}
				if r == ProbeFailure {
					actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "StartupProbe",
						Message: fmt.Sprintf("Init container %s failed startup probe", c.Name)}
					toStart = append(toStart, i)
					break
				}
			}
			if i == len(inits)-1 {
				initialized = true
			} else if !previouslyDone {
				toStart = append(toStart, i+1) // started for the first time: the next one may go
			}
			if cs.Hash != HashContainer(c) {
				actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Message: fmt.Sprintf("Init container %s definition changed", c.Name)}
				toStart = append(toStart, i)
			} else if r, found := probes.Liveness(cs.ID); c.LivenessProbe != nil && found && r == ProbeFailure {
				actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "LivenessProbe",
					Message: fmt.Sprintf("Init container %s failed liveness probe", c.Name)}
				toStart = append(toStart, i)
			}
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			switch {
			case sidecar:
				toStart = append(toStart, i) // a sidecar is restarted whenever it exits
			case cs.ExitCode != 0 || cs.Reason == "OOMKilled":
				if !restartOnFailure {
					actions.KillPod, actions.InitContainersToStart = true, nil
					return false // restartPolicy Never: a failed init container fails the pod
				}
				toStart = append(toStart, i)
			case i == len(inits)-1:
				initialized = true
			default:
				toStart = append(toStart, i+1) // it succeeded: the next one
			}
		default: // unknown: kill it, then start it again (or fail the pod)
			if !sidecar && !restartOnFailure {
				actions.KillPod, actions.InitContainersToStart = true, nil
				return false
			}
			actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "Unknown",
				Message: fmt.Sprintf("Init container is in %q state, try killing it before restart", "unknown")}
			toStart = append(toStart, i)
		}
		previouslyDone = true
	}
	if !previouslyDone {
		toStart = append(toStart, 0) // none has run yet: the first one
	}
	for i := len(toStart) - 1; i >= 0; i-- { // into spec order
		actions.InitContainersToStart = append(actions.InitContainersToStart, toStart[i])
	}
	return initialized
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

// SandboxReady reports whether the pod has a sandbox its containers can start in (the
// PodReadyToStartContainers condition, upstream GeneratePodReadyToStartContainersCondition).
func SandboxReady(pod *corev1.Pod, status *kubecontainer.PodStatus) bool {
	changed, _, _ := sandboxChanged(pod, status)
	return !changed
}

func hostNetwork(s *runtimeapi.PodSandboxStatus) bool {
	return s.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// ShouldRestart decides whether container c, not running, should be started (again): never
// during deletion; always if it never ran (or only was created, or is in an unknown state);
// otherwise by its own restartPolicy (a sidecar's is Always) or the pod's (upstream:
// kubecontainer.ShouldContainerBeRestarted with podutil.ContainerShouldRestart).
func ShouldRestart(pod *corev1.Pod, c *corev1.Container, cs *kubecontainer.ContainerStatus) bool {
	return shouldRestart(pod, c, cs)
}

func shouldRestart(pod *corev1.Pod, c *corev1.Container, cs *kubecontainer.ContainerStatus) bool {
	if pod.DeletionTimestamp != nil {
		return false
	}
	if cs == nil || cs.State == runtimeapi.ContainerState_CONTAINER_CREATED || cs.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN {
		return true
	}
	if cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
		return false
	}
	if kubecontainer.IsRestartableInitContainer(c) {
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

// anyRegularContainerCreated reports whether a regular container has an instance (created,
// running or exited): the pod got past its init containers (upstream HasAnyRegularContainerCreated).
func anyRegularContainerCreated(pod *corev1.Pod, status *kubecontainer.PodStatus) bool {
	for i := range pod.Spec.Containers {
		if cs := status.FindContainer(pod.Spec.Containers[i].Name); cs != nil && cs.State != runtimeapi.ContainerState_CONTAINER_UNKNOWN {
			return true
		}
	}
	return false
}

// AnyRegularContainerCreated is anyRegularContainerCreated for the kubelet's status code.
func AnyRegularContainerCreated(pod *corev1.Pod, status *kubecontainer.PodStatus) bool {
	return anyRegularContainerCreated(pod, status)
}

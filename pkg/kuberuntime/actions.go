package kuberuntime

// What SyncPod must do, decided by pure functions (upstream: kuberuntime_manager.go
// computePodActions); the init containers' part is in init_actions.go.

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
	// ContainersToUpdate are indexes into pod.Spec.Containers: running ones whose cpu or memory
	// the spec changed, resized in place (resize.go).
	ContainersToUpdate []int
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
// what to do. It is a pure function; SyncPod carries the result out. Its steps are upstream's:
// a new sandbox starts everything over; ephemeral containers; init containers; regular
// containers; what is not in the spec; a pod with nothing left to run is stopped. Whether a
// container runs again is kubecontainer's decision, with the container restart rules (KEP-5307).
// A running container whose cpu or memory changed is resized in place or restarted, by its
// resizePolicy (resize.go). Simplified from upstream: no pod-level resize, no RestartAllContainers (a matching rule restarts
// only its own container).
func computePodActions(pod *corev1.Pod, status *kubecontainer.PodStatus, probes ProbeResults) PodActions {
	// 1. A new sandbox (none yet, or it died or changed): kill everything and start over.
	createSandbox, attempt, sandboxID := sandboxChanged(pod, status)
	if createSandbox {
		return newSandboxActions(pod, status, attempt)
	}
	actions := PodActions{ContainersToKill: map[string]KillReason{}, SandboxID: sandboxID, Attempt: attempt}

	// 2. Ephemeral containers (kubectl debug) start in a running sandbox, even before the pod is
	// initialized — a debugger for a failing init container — and never again once they ran.
	for i := range pod.Spec.EphemeralContainers {
		if status.FindContainer(pod.Spec.EphemeralContainers[i].Name) == nil {
			actions.EphemeralContainersToStart = append(actions.EphemeralContainersToStart, i)
		}
	}

	// 3. Init containers: the next one to run, sidecars to keep running.
	initialized := computeInitContainerActions(pod, status, probes, &actions)
	if actions.KillPod || !initialized {
		return actions // initialization failed for good, or is still going on
	}

	// 4. Regular containers: start what should run, kill what must go.
	keep := computeContainerActions(pod, status, probes, &actions)

	// 5. Running containers the spec no longer names.
	killContainersNotInSpec(pod, status, &actions)

	// 6. Nothing runs and nothing will: stop the sandbox too (the pod is done, or being deleted).
	// Sidecars and ephemeral containers do not keep a finished pod alive: they are stopped with it.
	if keep == 0 && len(actions.ContainersToStart) == 0 {
		actions.KillPod = true
		actions.InitContainersToStart, actions.EphemeralContainersToStart = nil, nil
	}
	return actions
}

// newSandboxActions is computePodActions' first step when the pod needs a new sandbox: kill what
// is left, and create the sandbox unless the pod is done; in it, the first init container, or
// else the containers that should run (upstream: the createPodSandbox block).
func newSandboxActions(pod *corev1.Pod, status *kubecontainer.PodStatus, attempt uint32) PodActions {
	actions := PodActions{KillPod: true, ContainersToKill: map[string]KillReason{}}
	// A pod that must not restart and has run before stays dead: no new sandbox. Upstream reads
	// only the pod's restartPolicy here, not the containers' own.
	if pod.Spec.RestartPolicy == corev1.RestartPolicyNever && attempt != 0 && len(status.Containers) != 0 {
		return actions
	}
	// The containers to start, less those that succeeded and run once (restartPolicy OnFailure,
	// the container's own or else the pod's).
	var toStart []int
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if kubecontainer.RunsOnce(c, &pod.Spec) && succeeded(status.FindContainer(c.Name)) {
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

// computeContainerActions adds to actions what the regular containers need, and returns how many
// running ones are kept. A container not running is started when
// kubecontainer.ShouldContainerBeRestarted says so (one in an unknown state is killed first); a
// running one is killed when its spec changed (and started again), a liveness or startup probe
// failed (and started again unless its restartPolicy, or else the pod's, is Never; restart rules
// are not read: it has no exit code), or a resize needs a restart; else it is resized in place
// when its resources changed.
func computeContainerActions(pod *corev1.Pod, status *kubecontainer.PodStatus, probes ProbeResults, actions *PodActions) int {
	keep := 0
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := status.FindContainer(c.Name)
		if cs == nil || cs.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			if kubecontainer.ShouldContainerBeRestarted(c, pod, status) {
				actions.ContainersToStart = append(actions.ContainersToStart, i)
				if cs != nil && cs.State == runtimeapi.ContainerState_CONTAINER_UNKNOWN {
					actions.ContainersToKill[cs.ID] = KillReason{Name: c.Name, Reason: "Unknown",
						Message: fmt.Sprintf("Container is in %q state, try killing it before restart", "unknown")}
				}
			}
			continue
		}
		why := KillReason{Name: c.Name}
		restart := kubecontainer.RestartsWithoutExitCode(c, &pod.Spec)
		if cs.Hash != HashContainer(c) {
			why.Message, restart = fmt.Sprintf("Container %s definition changed", c.Name), true
		} else if r, ok := probes.Liveness(cs.ID); ok && r == ProbeFailure {
			why.Message, why.Reason = fmt.Sprintf("Container %s failed liveness probe", c.Name), "LivenessProbe"
		} else if r, ok := probes.Startup(cs.ID); ok && r == ProbeFailure {
			why.Message, why.Reason = fmt.Sprintf("Container %s failed startup probe", c.Name), "StartupProbe"
		} else if need := resizeAction(pod, c, cs); need == resizeRestart {
			why.Message, restart = fmt.Sprintf("Container %s resize requires restart", c.Name), true
		} else {
			if need == resizeUpdate {
				actions.ContainersToUpdate = append(actions.ContainersToUpdate, i)
			}
			keep++
			continue
		}
		if restart {
			why.Message += ", will be restarted"
			actions.ContainersToStart = append(actions.ContainersToStart, i)
		}
		actions.ContainersToKill[cs.ID] = why
	}
	return keep
}

// killContainersNotInSpec adds to actions the running containers whose name the pod's spec no
// longer has (init, ephemeral or regular).
func killContainersNotInSpec(pod *corev1.Pod, status *kubecontainer.PodStatus, actions *PodActions) {
	inSpec := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		inSpec[pod.Spec.InitContainers[i].Name] = true
	}
	for i := range pod.Spec.EphemeralContainers {
		inSpec[pod.Spec.EphemeralContainers[i].Name] = true
	}
	for i := range pod.Spec.Containers {
		inSpec[pod.Spec.Containers[i].Name] = true
	}
	for _, cs := range status.Containers {
		if cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING && !inSpec[cs.Name] {
			actions.ContainersToKill[cs.ID] = KillReason{Name: cs.Name, Message: "Container is not in the pod spec"}
		}
	}
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

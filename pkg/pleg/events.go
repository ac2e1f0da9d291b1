package pleg

// From two relists to events: the pure half of a relist (upstream: generic.go plegContainerState,
// convertState, generateEvents).

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// plegContainerState is the state PLEG compares between relists: CRI's container states folded
// into three, plus "non-existent" for a container that is not (or no longer) listed.
type plegContainerState string

const (
	plegContainerRunning     plegContainerState = "running"
	plegContainerExited      plegContainerState = "exited"
	plegContainerUnknown     plegContainerState = "unknown"
	plegContainerNonExistent plegContainerState = "non-existent"
)

// containerStates returns the PLEG state of each container and sandbox of a listed pod, by ID.
// Sandboxes count as containers (as upstream): READY is running, NOTREADY is exited.
func containerStates(pod *kubecontainer.RunningPod) map[string]plegContainerState {
	states := map[string]plegContainerState{}
	if pod == nil {
		return states
	}
	for _, c := range pod.Containers {
		states[c.GetId()] = fromContainerState(c.GetState())
	}
	for _, s := range pod.Sandboxes {
		states[s.GetId()] = fromSandboxState(s.GetState())
	}
	return states
}

// fromContainerState folds a CRI container state into a PLEG state. CREATED is "unknown": the
// kubelet starts containers right after creating them and has nothing to do for CREATED.
func fromContainerState(s runtimeapi.ContainerState) plegContainerState {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return plegContainerRunning
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return plegContainerExited
	default:
		return plegContainerUnknown
	}
}

// fromSandboxState folds a CRI sandbox state into a PLEG state.
func fromSandboxState(s runtimeapi.PodSandboxState) plegContainerState {
	switch s {
	case runtimeapi.PodSandboxState_SANDBOX_READY:
		return plegContainerRunning
	case runtimeapi.PodSandboxState_SANDBOX_NOTREADY:
		return plegContainerExited
	default:
		return plegContainerUnknown
	}
}

// podEvents compares one pod's container states at two relists, ordered by container ID. An ID
// missing from a map is non-existent there.
func podEvents(podID types.UID, old, current map[string]plegContainerState) []*PodLifecycleEvent {
	ids := make([]string, 0, len(old)+len(current))
	for id := range old {
		ids = append(ids, id)
	}
	for id := range current {
		if _, ok := old[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var events []*PodLifecycleEvent
	for _, id := range ids {
		events = append(events, computeEvents(podID, id, stateOf(old, id), stateOf(current, id))...)
	}
	return events
}

func stateOf(states map[string]plegContainerState, id string) plegContainerState {
	if s, ok := states[id]; ok {
		return s
	}
	return plegContainerNonExistent
}

// computeEvents decides the events for one container between two relists (upstream
// generateEvents). The new state decides; only a disappearance looks at the old one, so that a
// container that vanished without being seen exited is still reported dead before removed.
func computeEvents(podID types.UID, containerID string, oldState, newState plegContainerState) []*PodLifecycleEvent {
	if oldState == newState {
		return nil
	}
	event := func(t PodLifeCycleEventType) *PodLifecycleEvent {
		return &PodLifecycleEvent{ID: podID, Type: t, Data: containerID}
	}
	switch newState {
	case plegContainerRunning:
		return []*PodLifecycleEvent{event(ContainerStarted)}
	case plegContainerExited:
		return []*PodLifecycleEvent{event(ContainerDied)}
	case plegContainerUnknown:
		return []*PodLifecycleEvent{event(ContainerChanged)}
	case plegContainerNonExistent:
		if oldState == plegContainerExited {
			return []*PodLifecycleEvent{event(ContainerRemoved)} // its death was reported already
		}
		return []*PodLifecycleEvent{event(ContainerDied), event(ContainerRemoved)}
	default:
		// Unreachable: the states above are all there are.
		return []*PodLifecycleEvent{event(ContainerChanged)}
	}
}

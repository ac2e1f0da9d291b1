package pleg

// The events PLEG sends (upstream: pkg/kubelet/pleg/pleg.go).

import (
	"k8s.io/apimachinery/pkg/types"
)

// PodLifeCycleEventType says what happened to a container (or sandbox) of a pod.
type PodLifeCycleEventType string

const (
	// ContainerStarted: the container (or sandbox) is running now.
	ContainerStarted PodLifeCycleEventType = "ContainerStarted"
	// ContainerDied: the container exited, or the sandbox became NOTREADY.
	ContainerDied PodLifeCycleEventType = "ContainerDied"
	// ContainerRemoved: the container (or sandbox) no longer exists in the runtime.
	ContainerRemoved PodLifeCycleEventType = "ContainerRemoved"
	// ContainerChanged: the container is in a state PLEG cannot name (CREATED or UNKNOWN). Like
	// upstream, PLEG computes it and refreshes the cache, but does not send it: nobody acts on it.
	ContainerChanged PodLifeCycleEventType = "ContainerChanged"
)

// PodLifecycleEvent tells the kubelet that a pod needs a sync because one of its containers or
// sandboxes changed state.
type PodLifecycleEvent struct {
	// ID is the pod's UID.
	ID types.UID
	// Type is what happened.
	Type PodLifeCycleEventType
	// Data is the ID (string) of the container or sandbox that changed.
	Data any
}

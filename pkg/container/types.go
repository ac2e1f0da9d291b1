package container

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerStatus is the runtime's view of one container instance (upstream:
// kubecontainer.Status). A pod has one per container instance, so a restarted container appears
// once per attempt until the old instance is removed.
type ContainerStatus struct {
	ID           string
	Name         string
	State        runtimeapi.ContainerState
	CreatedAt    time.Time
	StartedAt    time.Time
	FinishedAt   time.Time
	ExitCode     int32
	Reason       string
	Message      string
	Image        string
	ImageRef     string
	Hash         uint64
	RestartCount int
	// Resources are the cpu and memory the runtime reports it applied (CRI ContainerStatus
	// resources); nil when it reports none.
	Resources *runtimeapi.LinuxContainerResources
}

// PodStatus is the runtime's view of one pod (upstream: kubecontainer.PodStatus): its sandboxes
// and container instances, newest first.
type PodStatus struct {
	ID        types.UID
	Name      string
	Namespace string
	// IPs of the newest ready sandbox.
	IPs        []string
	Sandboxes  []*runtimeapi.PodSandboxStatus
	Containers []*ContainerStatus
}

// FindContainer returns the newest instance of the named container, or nil.
func (s *PodStatus) FindContainer(name string) *ContainerStatus {
	for _, c := range s.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// RunningPod is a pod as found in the runtime, grouped by the pod UID label (upstream:
// kubecontainer.Pod). PLEG and housekeeping use it.
type RunningPod struct {
	ID         types.UID
	Name       string
	Namespace  string
	Sandboxes  []*runtimeapi.PodSandbox
	Containers []*runtimeapi.Container
}

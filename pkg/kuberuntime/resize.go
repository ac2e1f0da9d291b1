package kuberuntime

// In-place resize of running containers (upstream: kuberuntime_manager.go computePodResizeAction
// and doPodResizeAction): when the cpu or memory the pod's spec gives a running container
// differs from what the runtime applied, either update the container's cgroup through CRI
// UpdateContainerResources (resizePolicy NotRequired, the default) or restart it (resizePolicy
// RestartContainer for a resource that changed).

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// resizeNeed is what a running container needs for its resources.
type resizeNeed int

const (
	resizeNone    resizeNeed = iota // the runtime applied what the spec says (or does not tell)
	resizeUpdate                    // UpdateContainerResources
	resizeRestart                   // a changed resource's resizePolicy is RestartContainer
)

// resizeAction compares what the spec gives container c (cpu shares and quota, memory limit)
// with what the runtime reports it applied (cs.Resources). A runtime that reports nothing is
// taken at its word: no resize. Pure.
func resizeAction(pod *corev1.Pod, c *corev1.Container, cs *kubecontainer.ContainerStatus) resizeNeed {
	if cs.Resources == nil {
		return resizeNone
	}
	want := containerResources(pod, c, 0, false)
	cpuChanged := want.CpuShares != cs.Resources.CpuShares || want.CpuQuota != cs.Resources.CpuQuota
	memChanged := want.MemoryLimitInBytes != cs.Resources.MemoryLimitInBytes
	if !cpuChanged && !memChanged {
		return resizeNone
	}
	if (cpuChanged && resizePolicy(c, corev1.ResourceCPU) == corev1.RestartContainer) ||
		(memChanged && resizePolicy(c, corev1.ResourceMemory) == corev1.RestartContainer) {
		return resizeRestart
	}
	return resizeUpdate
}

// resizePolicy is c's restart policy for resource name; NotRequired when it names none.
func resizePolicy(c *corev1.Container, name corev1.ResourceName) corev1.ResourceResizeRestartPolicy {
	for _, p := range c.ResizePolicy {
		if p.ResourceName == name {
			return p.RestartPolicy
		}
	}
	return corev1.NotRequired
}

// updateForSync is SyncPod's resize step: send each container to update its new resources
// (upstream doPodResizeAction → updateContainerResources). The first failure stops it, as
// upstream (the updates go in order), and is the result's ResizeError: the runtime's message,
// which the kubelet shows as PodResizeInProgress reason Error; the next sync tries again.
func (m *Manager) updateForSync(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus, actions PodActions, result *SyncResult) {
	logger := klog.FromContext(ctx)
	for _, i := range actions.ContainersToUpdate {
		c := &pod.Spec.Containers[i]
		cs := status.FindContainer(c.Name)
		res := containerResources(pod, c, m.memoryCapacity, m.cgroupV2)
		logger.V(2).Info("Resizing container", "pod", klog.KObj(pod), "container", c.Name,
			"cpuShares", res.CpuShares, "cpuQuota", res.CpuQuota, "memoryLimit", res.MemoryLimitInBytes)
		if _, err := m.runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
			ContainerId: cs.ID, Linux: res}); err != nil {
			logger.Error(err, "UpdateContainerResources failed", "pod", klog.KObj(pod), "container", c.Name)
			result.ResizeError = err.Error()
			return
		}
		result.Changed, result.Resized = true, true
	}
}

// ResizeInProgress reports whether a running regular container of pod does not yet have, in the
// runtime, the cpu or memory the pod gives it (upstream: the PodResizeInProgress condition, set
// from allocation until actuation). Pure.
func ResizeInProgress(pod *corev1.Pod, status *kubecontainer.PodStatus) bool {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := status.FindContainer(c.Name)
		if cs != nil && cs.State == runtimeapi.ContainerState_CONTAINER_RUNNING && cs.Hash == HashContainer(c) &&
			resizeAction(pod, c, cs) != resizeNone {
			return true
		}
	}
	return false
}

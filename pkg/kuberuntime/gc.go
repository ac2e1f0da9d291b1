package kuberuntime

// Removing the dead instances a pod no longer needs (upstream: kuberuntime_gc.go, the container
// garbage collector, here run at the end of every SyncPod instead of on its own timer).

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// deadContainersKept is how many exited instances of one container a pod keeps: the newest is
// the API's state or lastState, one more for `kubectl logs --previous`, as upstream's GC default
// (MaxPerPodContainer) keeps them.
const deadContainersKept = 2

// deadContainersToRemove picks the exited instances beyond the newest deadContainersKept of each
// container name (status lists them newest first), and the created instances that a newer one
// replaced: never started (the kubelet died between create and start), they never will be. Pure.
func deadContainersToRemove(status *kubecontainer.PodStatus) []string {
	seen := map[string]int{}   // exited instances so far, by name
	newer := map[string]bool{} // an instance newer than this one exists, by name
	var out []string
	for _, c := range status.Containers {
		switch {
		case c.State == runtimeapi.ContainerState_CONTAINER_CREATED && newer[c.Name]:
			out = append(out, c.ID)
		case c.State == runtimeapi.ContainerState_CONTAINER_EXITED:
			seen[c.Name]++
			if seen[c.Name] > deadContainersKept {
				out = append(out, c.ID)
			}
		}
		newer[c.Name] = true
	}
	return out
}

// pruneDeadContainers removes old exited instances so a crash-looping pod does not pile them up,
// and replaced created ones (upstream: the container garbage collector).
func (m *Manager) pruneDeadContainers(ctx context.Context, status *kubecontainer.PodStatus) {
	for _, id := range deadContainersToRemove(status) {
		if _, err := m.runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil && !isNotFound(err) {
			klog.FromContext(ctx).V(2).Info("Failed to remove a dead container", "containerID", id, "err", err)
		}
	}
}

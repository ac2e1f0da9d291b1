package kuberuntime

// Making sure a container's image is there (upstream: kuberuntime_image.go and
// pkg/kubelet/images/image_manager.go EnsureImageExists, with its pull back-off).

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/journal"
)

// ensureImage pulls the image as imagePullPolicy says, behind a per-image backoff.
func (m *Manager) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sandboxConfig *runtimeapi.PodSandboxConfig) (string, *ContainerError) {
	spec := &runtimeapi.ImageSpec{Image: c.Image}
	present := ""
	if c.ImagePullPolicy != corev1.PullAlways {
		st, err := m.image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
		if err != nil {
			return "", &ContainerError{Name: c.Name, Reason: ReasonErrImagePull, Message: err.Error()}
		}
		present = st.GetImage().GetId()
	}
	if present != "" {
		return present, nil
	}
	if c.ImagePullPolicy == corev1.PullNever {
		return "", &ContainerError{Name: c.Name, Reason: ReasonErrImageNeverPull,
			Message: fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)}
	}
	key := pod.Namespace + "_" + pod.Name + "_" + string(pod.UID) + "_" + c.Image
	if m.pullBackoff.IsInBackOffSinceUpdate(key, m.clock.Now()) {
		return "", &ContainerError{Name: c.Name, Reason: ReasonImagePullBackOff, Message: fmt.Sprintf("Back-off pulling image %q", c.Image)}
	}
	m.pullMu.Lock()
	start := m.clock.Now()
	resp, err := m.image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: sandboxConfig})
	m.noteCRI("PullImage", journal.Pod(pod), start, err, "id", resp.GetImageRef(), "container", c.Name, "image", c.Image)
	m.pullMu.Unlock()
	if err != nil {
		m.pullBackoff.Next(key, m.clock.Now())
		return "", &ContainerError{Name: c.Name, Reason: ReasonErrImagePull, Message: fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)}
	}
	m.pullBackoff.Reset(key)
	return resp.GetImageRef(), nil
}

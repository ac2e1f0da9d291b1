package kuberuntime

// Making sure a container's image is there (upstream: kuberuntime_image.go and
// pkg/kubelet/images/image_manager.go EnsureImageExists, with its pull back-off).

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
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
		m.containerEvent(pod, c.Name, "", corev1.EventTypeNormal, EventPulled, "Container image %q already present on machine and can be accessed by the pod", c.Image)
		return present, nil
	}
	if c.ImagePullPolicy == corev1.PullNever {
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventErrImageNeverPull, "%s", msg)
		return "", &ContainerError{Name: c.Name, Reason: ReasonErrImageNeverPull, Message: msg}
	}
	key := pod.Namespace + "_" + pod.Name + "_" + string(pod.UID) + "_" + c.Image
	if m.pullBackoff.IsInBackOffSinceUpdate(key, m.clock.Now()) {
		m.containerEvent(pod, c.Name, "", corev1.EventTypeNormal, EventBackOff, "Back-off pulling image %q", c.Image)
		return "", &ContainerError{Name: c.Name, Reason: ReasonImagePullBackOff, Message: fmt.Sprintf("Back-off pulling image %q", c.Image)}
	}
	m.containerEvent(pod, c.Name, "", corev1.EventTypeNormal, EventPulling, "Pulling image %q", c.Image)
	m.pullMu.Lock()
	start := m.clock.Now()
	resp, err := m.image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: sandboxConfig})
	m.noteCRI("PullImage", journal.Pod(pod), start, err, "id", resp.GetImageRef(), "container", c.Name, "image", c.Image)
	m.pullMu.Unlock()
	if err != nil {
		m.pullBackoff.Next(key, m.clock.Now())
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err) // the CRI error as is, as upstream
		m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventFailed, "%s", msg)
		return "", &ContainerError{Name: c.Name, Reason: ReasonErrImagePull, Message: msg}
	}
	m.pullBackoff.Reset(key)
	took := m.clock.Since(start).Truncate(time.Millisecond)
	m.containerEvent(pod, c.Name, "", corev1.EventTypeNormal, EventPulled, "Successfully pulled image %q in %v (%v including waiting). Image size: %v bytes.",
		c.Image, took, took, imageSize(ctx, m.image, resp.GetImageRef()))
	return resp.GetImageRef(), nil
}

// imageSize is the pulled image's size as the runtime reports it (0 if it cannot say).
func imageSize(ctx context.Context, images runtimeapi.ImageServiceClient, ref string) uint64 {
	st, err := images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return 0
	}
	return st.GetImage().GetSize()
}

// imageUser is the user an image runs as, from its USER as the runtime reports it: a numeric
// uid, or else a name the kubelet cannot resolve; an image with neither runs as root, uid 0
// (upstream helpers.go getImageUser).
func (m *Manager) imageUser(ctx context.Context, image string) (*int64, string, error) {
	st, err := m.image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return nil, "", fmt.Errorf("image status of %q: %w", image, err)
	}
	if uid := st.GetImage().GetUid(); uid != nil {
		return &uid.Value, "", nil
	}
	if name := st.GetImage().GetUsername(); name != "" {
		return nil, name, nil
	}
	return new(int64), "", nil
}

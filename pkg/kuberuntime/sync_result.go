package kuberuntime

// What one SyncPod reports back (upstream: pkg/kubelet/container/sync_result.go, and the waiting
// reasons of kuberuntime_container.go and images/types.go).

import (
	"errors"
	"fmt"
)

// Waiting reasons the real kubelet shows in containerStatuses[].state.waiting.reason.
const (
	ReasonCrashLoopBackOff   = "CrashLoopBackOff"
	ReasonErrImagePull       = "ErrImagePull"
	ReasonImagePullBackOff   = "ImagePullBackOff"
	ReasonErrImageNeverPull  = "ErrImageNeverPull"
	ReasonCreateContainerErr = "CreateContainerError"
	ReasonRunContainerError  = "RunContainerError"
	ReasonCreateSandboxError = "CreatePodSandboxError"
	ReasonConfigSandboxError = "ConfigPodSandboxError" // upstream kubecontainer.ErrConfigPodSandbox: the sandbox config (its DNS) could not be made
	ReasonCreateConfigError  = "CreateContainerConfigError"
)

// ErrResizePodInPlace prefixes a failed in-place update in the sync's error (upstream
// kubecontainer.ErrResizePodInPlace).
const ErrResizePodInPlace = "ResizePodInPlaceError"

// ContainerError is why a container could not be started in this sync; Reason is the waiting
// reason the pod status shows.
type ContainerError struct {
	Name    string
	Reason  string
	Message string
}

func (e ContainerError) Error() string { return fmt.Sprintf("%s: %s: %s", e.Name, e.Reason, e.Message) }

// SyncResult is what one SyncPod did not manage.
type SyncResult struct {
	// SandboxError is set when a new sandbox could not be created.
	SandboxError error
	// ContainerErrors by container name.
	ContainerErrors map[string]ContainerError
	// Changed reports that the sync killed, created or started something and it succeeded: the
	// runtime now holds a state the PLEG has not listed yet. A sync that only met a back-off or
	// an error leaves it false, so a crash-looping pod does not ask for relists.
	Changed bool
	// Resized reports that a running container's resources were updated in place: no state
	// changed, so the PLEG will not notice; the caller reads the pod's status again.
	Resized bool
	// ResizeError is the runtime's message when an in-place update failed (upstream: the
	// ResizePodInPlace SyncResult's message); the containers after it were not updated.
	ResizeError string
}

// Err joins everything that went wrong, or nil.
func (r SyncResult) Err() error {
	errs := []error{r.SandboxError}
	if r.ResizeError != "" {
		errs = append(errs, fmt.Errorf("%s: %s", ErrResizePodInPlace, r.ResizeError))
	}
	for _, e := range r.ContainerErrors {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

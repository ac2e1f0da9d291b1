package fake

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// faults holds what the teacher asked to break. Guarded by Runtime.mu.
type faults struct {
	pullFailures map[string]pullFailure       // by normalized image reference
	latency      map[string]time.Duration     // by short method name, e.g. "ListContainers"
	runtimeDown  *runtimeapi.RuntimeCondition // non-nil: RuntimeReady is false
}

type pullFailure struct {
	remaining int
	message   string
}

func newFaults() faults {
	return faults{pullFailures: map[string]pullFailure{}, latency: map[string]time.Duration{}}
}

// takePullFailure consumes one injected failure for ref, if any.
func (f *faults) takePullFailure(ref string) error {
	key := normalizeImageRef(ref)
	pf, ok := f.pullFailures[key]
	if !ok {
		return nil
	}
	if pf.remaining--; pf.remaining <= 0 {
		delete(f.pullFailures, key)
	} else {
		f.pullFailures[key] = pf
	}
	return status.Errorf(codes.Unknown, "failed to pull image %q: %s", ref, pf.message)
}

// KillContainer ends a running container's process now with exitCode, as if it crashed or the
// OOM killer struck. The container must be RUNNING.
func (r *Runtime) KillContainer(id string, exitCode int32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(id)
	if err != nil {
		return err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "container %q is %s: only a RUNNING container can be killed", c.id, c.state)
	}
	r.exitLocked(c, exitCode, reasonFor(exitCode), "killed by fault injection")
	return nil
}

// SetSandboxNotReady marks a sandbox NOTREADY, as if its network namespace died. Its containers
// keep running; the kubelet is expected to notice and recreate the pod.
func (r *Runtime) SetSandboxNotReady(id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.sandboxLocked(id)
	if err != nil {
		return err
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		r.publishSandboxLocked(s, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
	return nil
}

// FailNextPulls makes the next n pulls of image fail with message (n <= 0 clears the fault).
func (r *Runtime) FailNextPulls(image string, n int, message string) error {
	if image == "" {
		return status.Error(codes.InvalidArgument, "image is required")
	}
	if message == "" {
		message = "injected pull failure"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := normalizeImageRef(image)
	if n <= 0 {
		delete(r.faults.pullFailures, key)
		return nil
	}
	r.faults.pullFailures[key] = pullFailure{remaining: n, message: message}
	return nil
}

// AddLatency delays every call of a CRI method (short name like "ListContainers", or "*" for all)
// by d on the runtime's clock. d <= 0 removes the delay.
func (r *Runtime) AddLatency(method string, d time.Duration) error {
	if method == "" {
		return status.Error(codes.InvalidArgument, `method is required: a CRI method name like "ListContainers", or "*"`)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d <= 0 {
		delete(r.faults.latency, method)
		return nil
	}
	r.faults.latency[method] = d
	return nil
}

// SetRuntimeNotReady makes Status report RuntimeReady=false with reason and message; the node
// should turn NotReady. Other calls keep working.
func (r *Runtime) SetRuntimeNotReady(reason, message string) {
	if reason == "" {
		reason = "FaultInjected"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults.runtimeDown = &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: false, Reason: reason, Message: message}
}

// SetRuntimeReady undoes SetRuntimeNotReady.
func (r *Runtime) SetRuntimeReady() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults.runtimeDown = nil
}

// injectLatency waits the delay configured for method, if any, or until ctx ends.
func (r *Runtime) injectLatency(ctx context.Context, method string) error {
	r.mu.Lock()
	d, ok := r.faults.latency[method]
	if !ok {
		d = r.faults.latency["*"]
	}
	r.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// describeFaults lists active faults for Status's verbose info.
func (f *faults) describe() map[string]string {
	out := map[string]string{}
	for img, pf := range f.pullFailures {
		out["failPulls/"+img] = fmt.Sprintf("%d left: %s", pf.remaining, pf.message)
	}
	for m, d := range f.latency {
		out["latency/"+m] = d.String()
	}
	return out
}

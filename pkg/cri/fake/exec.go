package fake

import (
	"bytes"
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// ExecSync runs cmd "inside" a running container with the program grammar (see doc.go) and
// returns its output. Nothing runs on the host. Unknown commands succeed with no output.
func (r *Runtime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if len(req.GetCmd()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "cmd is required")
	}
	if req.GetTimeout() < 0 {
		return nil, status.Error(codes.InvalidArgument, "timeout must not be negative")
	}
	r.mu.Lock()
	c, err := r.containerLocked(req.GetContainerId())
	if err == nil && c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		err = errNotRunning(c)
	}
	var v view
	if err == nil {
		v = r.viewLocked(c)
	}
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(4).Info("ExecSync", "containerID", c.id, "cmd", req.GetCmd())

	// The timeout runs on the runtime's clock so tests can step it.
	var deadline <-chan time.Time
	if req.GetTimeout() > 0 {
		t := r.clock.NewTimer(time.Duration(req.GetTimeout()) * time.Second)
		defer t.Stop()
		deadline = t.C()
	}
	timedOut := status.Errorf(codes.DeadlineExceeded, "command %q timed out after %ds", req.GetCmd(), req.GetTimeout())

	var stdout, stderr bytes.Buffer
	for _, st := range parseProgram(req.GetCmd(), unknownSucceeds) {
		switch st.kind {
		case stepEcho:
			out := &stdout
			if st.stream == runtimeapi.Stderr {
				out = &stderr
			}
			out.WriteString(st.text)
			if !st.noEOL {
				out.WriteString("\n")
			}
		case stepInspect:
			out, errOut, code := inspect(v, st.argv[0], st.argv[1:])
			stdout.WriteString(out)
			stderr.WriteString(errOut)
			if code != 0 {
				return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code}, nil
			}
		case stepExit:
			return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: st.code}, nil
		case stepForever:
			select {
			case <-deadline:
				return nil, timedOut
			case <-ctx.Done():
				return nil, status.FromContextError(ctx.Err()).Err()
			}
		case stepSleep:
			t := r.clock.NewTimer(st.d)
			select {
			case <-t.C():
			case <-deadline:
				t.Stop()
				return nil, timedOut
			case <-ctx.Done():
				t.Stop()
				return nil, status.FromContextError(ctx.Err()).Err()
			}
		}
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}, nil
}

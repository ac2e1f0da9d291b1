package prober

// The exec handler (upstream: pkg/probe/exec/exec.go, with prober.go's execInContainer and the
// CRI client's timeout error, staging/src/k8s.io/cri-client/pkg/remote_runtime.go execSyncV1).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxOutput is how much of a handler's output (exec: stdout then stderr; HTTP: the body) is
// kept, as upstream: 10 KiB.
const maxOutput = 10 << 10

// execProbe runs cmd in the container: exit code 0 is success, any other a failure; the output
// (stdout then stderr, at most 10 KiB) is the message either way. A command that timed out is a
// failure whose message is the CRI client's error, e.g.
//
//	command timed out: "sh -c sleep 5" timed out after 1s
//
// Any other error means the probe could not run (unknown).
func execProbe(ctx context.Context, e Exec, containerID string, cmd []string, timeout time.Duration) (outcome, string, error) {
	stdout, stderr, exitCode, err := e.ExecSync(ctx, containerID, cmd, timeout)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
			return outcomeFailure, fmt.Sprintf("command timed out: %q timed out after %s", strings.Join(cmd, " "), timeout), nil
		}
		return outcomeUnknown, "", err
	}
	output := append(append([]byte(nil), stdout...), stderr...)
	if len(output) > maxOutput {
		output = output[:maxOutput]
	}
	if exitCode != 0 {
		return outcomeFailure, string(output), nil
	}
	return outcomeSuccess, string(output), nil
}

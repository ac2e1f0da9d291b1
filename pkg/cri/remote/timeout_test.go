package remote

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The deadlines of upstream's cri-client: the runtime request timeout, plus the grace period for
// StopContainer and the command's timeout for ExecSync; none for an ExecSync without a timeout
// (a lifecycle hook) and for PullImage.
func TestCallTimeout(t *testing.T) {
	const rt = 2 * time.Minute
	tests := []struct {
		name string
		req  any
		want time.Duration
		ok   bool
	}{
		{"Version", &runtimeapi.VersionRequest{}, rt, true},
		{"StopContainer", &runtimeapi.StopContainerRequest{Timeout: 300}, rt + 300*time.Second, true},
		{"ExecSync with a timeout", &runtimeapi.ExecSyncRequest{Timeout: 5}, rt + 5*time.Second, true},
		{"ExecSync without", &runtimeapi.ExecSyncRequest{}, 0, false},
		{"PullImage", &runtimeapi.PullImageRequest{}, 0, false},
	}
	for _, tc := range tests {
		if got, ok := callTimeout(rt, tc.req); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %s, %v; want %s, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

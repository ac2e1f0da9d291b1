package kubelet

import (
	"context"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/nodestatus"
)

// RuntimeReadinessCheck is the node readiness check on the container runtime: its Status call
// must answer, with RuntimeReady and NetworkReady true (upstream: kubelet.go updateRuntimeUp and
// runtime_state.go, which put "container runtime is down" / "container runtime network not ready"
// in the Ready condition's message).
func RuntimeReadinessCheck(rs runtimeapi.RuntimeServiceClient, timeout time.Duration) nodestatus.ReadinessCheck {
	return nodestatus.ReadinessCheck{
		Name: "container runtime",
		Check: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			resp, err := rs.Status(ctx, &runtimeapi.StatusRequest{})
			if err != nil {
				return fmt.Errorf("container runtime is down: %w", err)
			}
			return runtimeConditionsError(resp.GetStatus())
		},
	}
}

// runtimeConditionsError returns why a runtime status is not ready, or nil.
func runtimeConditionsError(st *runtimeapi.RuntimeStatus) error {
	seen := map[string]bool{}
	for _, c := range st.GetConditions() {
		seen[c.GetType()] = true
		if c.GetStatus() {
			continue
		}
		switch c.GetType() {
		case runtimeapi.RuntimeReady:
			return fmt.Errorf("container runtime not ready: RuntimeReady=false reason:%s message:%s", c.GetReason(), c.GetMessage())
		case runtimeapi.NetworkReady:
			return fmt.Errorf("container runtime network not ready: NetworkReady=false reason:%s message:%s", c.GetReason(), c.GetMessage())
		}
	}
	if !seen[runtimeapi.RuntimeReady] {
		return fmt.Errorf("container runtime did not report a %s condition", runtimeapi.RuntimeReady)
	}
	return nil
}

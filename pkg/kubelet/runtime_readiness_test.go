package kubelet

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The Ready condition's message names what the runtime said, as upstream's runtimeState does.
func TestRuntimeConditionsError(t *testing.T) {
	cond := func(typ string, ok bool, reason string) *runtimeapi.RuntimeCondition {
		return &runtimeapi.RuntimeCondition{Type: typ, Status: ok, Reason: reason, Message: "m"}
	}
	tests := []struct {
		name string
		st   *runtimeapi.RuntimeStatus
		want string // "" means ready
	}{
		{"ready", &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, true, ""), cond(runtimeapi.NetworkReady, true, "")}}, ""},
		{"runtime not ready", &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, false, "Broken")}}, "RuntimeReady=false reason:Broken"},
		{"network not ready", &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, true, ""), cond(runtimeapi.NetworkReady, false, "NoCNI")}}, "network not ready"},
		{"no conditions", &runtimeapi.RuntimeStatus{}, "did not report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := runtimeConditionsError(tc.st)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Lab 01: hello running is exercise 2; exercise 4, the kubelet restarted, shows as RESTARTS ≥ 1
// on a `sleep infinity` container (the built-in runtime died with the kubelet). A student who
// skipped the restart has hello at RESTARTS 0: the check fails and says to do exercise 4.
func TestLab01SkippedRestart(t *testing.T) {
	restarted := running("hello", "n")
	restarted.Status.ContainerStatuses[0].RestartCount = 1
	tests := []struct {
		name string
		pod  *corev1.Pod
		ok   bool
		says string
	}{
		{"exercise 2 skipped: no hello", nil, false, "create it: kubectl run hello"},
		{"exercise 4 skipped: hello never restarted", running("hello", "n"), false, "RESTARTS 0"},
		{"done: the kubelet restarted", restarted, true, "RESTARTS 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := restartedWithKubelet("default/hello", tc.pod, "n")
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
			if !tc.ok && !strings.Contains(r.fix, "exercise 4") && tc.pod != nil {
				t.Errorf("the fix does not name exercise 4: %q", r.fix)
			}
		})
	}
}

package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Lab 04: a restart is not enough; the last exit must be the injected kill.
func TestKilledAndRestarted(t *testing.T) {
	pod := running("lab04-kill", "n")
	if r := killedAndRestarted(pod); r.ok {
		t.Errorf("exercise 1 skipped (never killed, never restarted): %s", r)
	}
	pod.Status.ContainerStatuses[0].RestartCount = 1
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 143}
	if r := killedAndRestarted(pod); r.ok {
		t.Errorf("restarted after a stop, not a kill: %s", r)
	}
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 42, Message: "killed by fault injection"}
	if r := killedAndRestarted(pod); !r.ok {
		t.Errorf("killed with --exit-code 42: %s", r)
	}
}

// Lab 04: the old sandbox stays NOTREADY, exactly one new one is READY, and the API shows its IP.
func TestSandboxReplaced(t *testing.T) {
	pod := running("lab04-sandbox", "n")
	old := fakeSandbox{ID: "old", State: "SANDBOX_NOTREADY", IP: "127.88.0.8"}
	cur := fakeSandbox{ID: "new", State: "SANDBOX_READY", IP: "127.88.0.9"}
	tests := []struct {
		name      string
		sandboxes []fakeSandbox
		ok        bool
	}{
		{"exercise 4 skipped: the sandbox was never flipped", []fakeSandbox{cur}, false},
		{"not replaced yet", []fakeSandbox{old}, false},
		{"replaced", []fakeSandbox{old, cur}, true},
		{"API shows the old IP", []fakeSandbox{old, {ID: "new", State: "SANDBOX_READY", IP: "127.88.0.10"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := sandboxReplaced(pod, tc.sandboxes); r.ok != tc.ok {
				t.Errorf("got %s, want ok=%v", r, tc.ok)
			}
		})
	}
}

package main

import (
	"fmt"
	"strings"
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

// Lab 04, exercise 3 skipped: every relist took milliseconds, so the histogram's bucket
// le="1.024" holds them all: missing, and the fix names the latency command.
func TestLab04SkippedSlowRuntime(t *testing.T) {
	histogram := func(fast, count int) string {
		return fmt.Sprintf("# TYPE %s histogram\n%s_bucket{le=\"0.512\"} %d\n%s_bucket{le=\"1.024\"} %d\n%s_bucket{le=\"2.048\"} %d\n%s_sum 12.5\n%s_count %d\nkubelet_pod_workers 5\n",
			relistMetric, relistMetric, fast, relistMetric, fast, relistMetric, count, relistMetric, relistMetric, count)
	}
	tests := []struct {
		name string
		text string
		ok   bool
		says string
	}{
		{"exercise 3 skipped: every relist fast", histogram(120, 120), false, "the runtime was never slow"},
		{"no histogram", "kubelet_pod_workers 5\n", false, "has no " + relistMetric},
		{"done: two slow relists", histogram(118, 120), true, "2 of 120 relists took longer than 1.024 s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := slowRelists(parseRelistHistogram(tc.text))
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) || (!r.ok && tc.name != "no histogram" && !strings.Contains(r.fix, "latency ListContainers 2s")) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

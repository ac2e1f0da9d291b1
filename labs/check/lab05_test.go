package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Lab 05: CrashLoopBackOff needs restartPolicy Always, a restart, exit code 1 and the waiting reason.
func TestCrashLoopingAndFailed(t *testing.T) {
	crash := running("lab05-crash", "n")
	cs := &crash.Status.ContainerStatuses[0]
	if r := crashLooping("default/lab05-crash", crash, "n"); r.ok {
		t.Errorf("running, never restarted: %s", r)
	}
	cs.RestartCount = 2
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	if r := crashLooping("default/lab05-crash", crash, "n"); r.ok || !strings.Contains(r.what, "terminated: Error") {
		t.Errorf("between back-offs: %s", r)
	}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s"}}
	if r := crashLooping("default/lab05-crash", crash, "n"); !r.ok {
		t.Errorf("in CrashLoopBackOff: %s", r)
	}
	crash.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	if r := crashLooping("default/lab05-crash", crash, "n"); r.ok {
		t.Errorf("restartPolicy OnFailure passed: %s", r)
	}

	once := running("lab05-once", "n")
	once.Spec.RestartPolicy = corev1.RestartPolicyNever
	if r := endedFailed("default/lab05-once", once, "n"); r.ok {
		t.Errorf("still running: %s", r)
	}
	once.Status.Phase = corev1.PodFailed
	once.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	if r := endedFailed("default/lab05-once", once, "n"); !r.ok {
		t.Errorf("Failed: %s", r)
	}
	ready := fakeSandbox{ID: "s1", Name: "lab05-once", Namespace: "default", State: "SANDBOX_READY"}
	if r := sandboxStopped(once, []fakeSandbox{ready}, nil); r.ok {
		t.Errorf("READY sandbox passed: %s", r)
	}
	ready.State = "SANDBOX_NOTREADY"
	if r := sandboxStopped(once, []fakeSandbox{ready}, []fakeContainer{{ID: "c1", SandboxID: "s1", State: "CONTAINER_EXITED"}}); !r.ok {
		t.Errorf("stopped sandbox: %s", r)
	}
}

// Lab 05, exercise 3: the deleted lab05-crash is found in the kubelet's journal under its old UID.
// Skipped, the journal holds only the current pod (or a pod deleted before it ever restarted, or
// one whose deletion the kubelet has not finished): missing.
func TestLab05SkippedDelete(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ev := func(uid, source, kind string, sec int, fields map[string]string) journal.Event {
		return journal.Event{Pod: "default/lab05-crash", UID: uid, Source: source, Kind: kind, Time: at.Add(time.Duration(sec) * time.Second), Fields: fields}
	}
	starts := func(uid string, n int) []journal.Event {
		var out []journal.Event
		for i := range n {
			out = append(out, ev(uid, journal.SourceCRI, "StartContainer", i, map[string]string{"id": "c"}))
		}
		return out
	}
	deleted := func(uid string, sec int) []journal.Event {
		return []journal.Event{ev(uid, journal.SourceSyncLoop, "configCh DELETE", sec, nil), ev(uid, journal.SourceStatus, "delete", sec, map[string]string{"code": "200"})}
	}
	tests := []struct {
		name   string
		events []journal.Event
		ok     bool
		says   string
	}{
		{"exercise 3 skipped: only the current pod", starts("cur", 3), false, "0 earlier pod(s)"},
		{"the current pod's own DELETE does not count", append(starts("cur", 3), deleted("cur", 5)...), false, "no default/lab05-crash deleted"},
		{"deleted before it ever restarted", append(starts("old", 1), deleted("old", 2)...), false, "1 earlier pod(s)"},
		{"deleted, but the kubelet has not finished", append(starts("old", 3), deleted("old", 5)[0]), false, "no default/lab05-crash deleted"},
		{"a failed start does not count", append(append(starts("old", 1), ev("old", journal.SourceCRI, "StartContainer", 1, map[string]string{"error": "boom"})), deleted("old", 5)...), false, "no default/lab05-crash"},
		{"done: deleted while crash-looping, created again", append(append(starts("old", 3), deleted("old", 5)...), starts("cur", 1)...), true, "(uid old) was deleted after 3 starts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := deletedWhileCrashLooping("default/lab05-crash", "cur", tc.events)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) || (!r.ok && !strings.Contains(r.fix, "exercise 3")) {
				t.Errorf("got %q, want ok=%v containing %q (and a fix naming exercise 3)", r, tc.ok, tc.says)
			}
		})
	}
}

package pods

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// terminated waits until the pod's first container has terminated and returns that state.
func terminated(t *testing.T, ns, name string) *corev1.ContainerStateTerminated {
	t.Helper()
	var term *corev1.ContainerStateTerminated
	framework.Eventually(t, time.Minute, name+" terminated", func() (bool, string) {
		p := getPod(t, ns, name)
		if len(p.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		term = p.Status.ContainerStatuses[0].State.Terminated
		return term != nil, describe(p)
	})
	return term
}

// The termination message: what the container wrote to /dev/termination-log (the file the
// kubelet mounted there), or with FallbackToLogsOnError the tail of its log.
func TestTerminationMessage(t *testing.T) {
	n := startNode(t, "e2e-termination-message")
	ns := namespace(t)
	fromFile := podSpec(n.name, corev1.RestartPolicyNever, "sh", "-c", "echo -n bye > /dev/termination-log; exit 3")
	fromFile.Containers[0].TerminationMessagePath = "/dev/termination-log"
	createPod(t, ns, "from-file", fromFile)
	fromLog := podSpec(n.name, corev1.RestartPolicyNever, "sh", "-c", "echo from the log; exit 1")
	fromLog.Containers[0].TerminationMessagePath = "/dev/termination-log"
	fromLog.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	createPod(t, ns, "from-log", fromLog)

	if term := terminated(t, ns, "from-file"); term.Message != "bye" || term.ExitCode != 3 {
		t.Errorf("from-file: %+v, want message \"bye\" and exit 3", term)
	}
	if term := terminated(t, ns, "from-log"); term.Message != "from the log\n" {
		t.Errorf("from-log: message %q, want the log's tail", term.Message)
	}
}

// A postStart hook that fails kills the container (FailedPostStartHook), and restartPolicy
// Always starts it again.
func TestFailedPostStartHook(t *testing.T) {
	n := startNode(t, "e2e-poststart")
	ns := namespace(t)
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}}
	createPod(t, ns, "hooked", spec)
	framework.Eventually(t, 2*time.Minute, "restarted after its postStart hook failed", func() (bool, string) {
		p := getPod(t, ns, "hooked")
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1, describe(p)
	})
	events := cluster.Events(t, ns, "hooked")
	for _, want := range []string{"kubelet Warning FailedPostStartHook PostStartHook failed", "kubelet Normal Killing FailedPostStartHook"} {
		if !framework.HasEvent(events, want) {
			t.Errorf("no Event %q in %q", want, events)
		}
	}
}

// A preStop hook runs before the container is stopped, inside the grace period: here it writes
// the termination message of a pod stopped by its activeDeadlineSeconds; and one that would run
// for ever is cut at the grace period.
func TestPreStopHook(t *testing.T) {
	n := startNode(t, "e2e-prestop")
	ns := namespace(t)
	spec := podSpec(n.name, corev1.RestartPolicyNever, "sleep", "infinity")
	spec.ActiveDeadlineSeconds = ptr.To[int64](2)
	spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{"sh", "-c", "echo -n stopped by preStop > /dev/termination-log"}}}}
	createPod(t, ns, "polite", spec)
	if term := terminated(t, ns, "polite"); term.Message != "stopped by preStop" {
		t.Errorf("termination message %q: the preStop hook did not run before the stop", term.Message)
	}

	slow := podSpec(n.name, corev1.RestartPolicyNever, "sleep", "infinity")
	slow.ActiveDeadlineSeconds = ptr.To[int64](2)
	slow.TerminationGracePeriodSeconds = ptr.To[int64](3)
	slow.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "3600"}}}}
	createPod(t, ns, "slow", slow)
	term := terminated(t, ns, "slow") // within a minute, not after the hour the hook asks for
	if d := term.FinishedAt.Sub(term.StartedAt.Time); d > 30*time.Second {
		t.Errorf("stopped %s after it started: the preStop hook was not cut at the grace period", d)
	}
}

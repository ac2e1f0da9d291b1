package kubelet

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// podOutcome is one row of the pod sync tables (TestSyncPodOutcomes, lab 0's TestLab00): a pod
// with one container running program under restartPolicy, and the status predicted for it. The
// prediction holds if the API shows that status at some moment within outcomeWithin of the pod's
// life on the node's clock.
type podOutcome struct {
	name          string
	restartPolicy corev1.RestartPolicy
	program       []string // the container's command: a program of fakeruntime/doc.go, "Container programs"
	want          outcome
}

// outcome is a pod's status in short: its phase, its container's reason (the waiting or
// terminated reason; "" while it runs) and the container's restart count.
type outcome struct {
	phase    corev1.PodPhase
	reason   string
	restarts int32
}

// outcomeWithin is how long, on the node's clock, a pod of a podOutcome lives.
const outcomeWithin = 2 * time.Minute

// String is the outcome as a student reads it.
func (o outcome) String() string {
	reason := o.reason
	if reason == "" {
		reason = "running"
	}
	return fmt.Sprintf("{%s %s restarts=%d}", o.phase, reason, o.restarts)
}

// outcomeOf is a status in short.
func outcomeOf(st corev1.PodStatus) outcome {
	o := outcome{phase: st.Phase}
	if len(st.ContainerStatuses) > 0 {
		cs := st.ContainerStatuses[0]
		o.restarts = cs.RestartCount
		switch {
		case cs.State.Waiting != nil:
			o.reason = cs.State.Waiting.Reason
		case cs.State.Terminated != nil:
			o.reason = cs.State.Terminated.Reason
		}
	}
	return o
}

// observe runs the row's pod on a Kubelet of its own, second by second of the node's clock, and
// returns every status the API showed for it, in order, up to the first that matches the
// prediction (then matched is true) or to the end of outcomeWithin.
func observe(t *testing.T, row podOutcome) (seen []outcome, matched bool) {
	t.Helper()
	pod := testPod(row.name)
	pod.Spec.RestartPolicy = row.restartPolicy
	pod.Spec.Containers[0].Command = row.program
	tk := newTestKubelet(t, pod)
	tk.iterate(t, configCh) // ADD
	end := tk.clock.Now().Add(outcomeWithin)
	var last corev1.PodStatus
	record := func() bool {
		p := tk.apiPod(t, pod)
		if p == nil || equality.Semantic.DeepEqual(p.Status, last) {
			return false
		}
		last = p.Status
		o := outcomeOf(last)
		if len(seen) == 0 || o != seen[len(seen)-1] {
			seen = append(seen, o)
		}
		return o == row.want
	}
	tk.waitFor(t, "the pod's life to end", func() bool {
		// One second of the node's clock, then turns until the API's status stays the same for
		// three turns in a row: the workers have done what that second asked of them.
		tk.advance(t, time.Second)
		for quiet := 0; quiet < 3; {
			if record() {
				matched = true
				return true
			}
			quiet++
			if p := tk.apiPod(t, pod); p != nil && !equality.Semantic.DeepEqual(p.Status, last) {
				quiet = 0
			}
			tk.turn(t)
		}
		return !tk.clock.Now().Before(end)
	})
	return seen, matched
}

// Each row's pod, run by the Kubelet, shows the predicted status: SyncPod and kuberuntime decide
// restart or not from restartPolicy and the exit code, the back-off, and the pod's phase
// (upstream: kuberuntime computePodActions, kubelet_pods.go getPhase).
func TestSyncPodOutcomes(t *testing.T) {
	exit3 := []string{"sh", "-c", "exit 3"}
	exit0 := []string{"sh", "-c", "exit 0"}
	for _, row := range []podOutcome{
		{"runs", corev1.RestartPolicyAlways, []string{"sleep", "infinity"}, outcome{corev1.PodRunning, "", 0}},
		{"always-exit3-restarted-at-once", corev1.RestartPolicyAlways, exit3, outcome{corev1.PodRunning, "CrashLoopBackOff", 1}},
		{"always-exit3-backoff-doubles", corev1.RestartPolicyAlways, exit3, outcome{corev1.PodRunning, "CrashLoopBackOff", 3}},
		{"always-exit0-restarted-too", corev1.RestartPolicyAlways, exit0, outcome{corev1.PodRunning, "CrashLoopBackOff", 1}},
		{"onfailure-exit3", corev1.RestartPolicyOnFailure, exit3, outcome{corev1.PodRunning, "CrashLoopBackOff", 1}},
		{"onfailure-exit0-succeeds", corev1.RestartPolicyOnFailure, exit0, outcome{corev1.PodSucceeded, "Completed", 0}},
		{"never-exit3-fails", corev1.RestartPolicyNever, exit3, outcome{corev1.PodFailed, "Error", 0}},
		{"never-sleep-then-succeeds", corev1.RestartPolicyNever, []string{"sleep", "5"}, outcome{corev1.PodSucceeded, "Completed", 0}},
	} {
		t.Run(row.name, func(t *testing.T) {
			seen, ok := observe(t, row)
			if !ok {
				t.Errorf("predicted %v; the API showed, in order: %v", row.want, seen)
			}
		})
	}
	// A wrong prediction fails: the pod never shows it.
	t.Run("a wrong prediction fails", func(t *testing.T) {
		wrong := podOutcome{"wrong", corev1.RestartPolicyNever, exit3, outcome{corev1.PodSucceeded, "Completed", 0}}
		if seen, ok := observe(t, wrong); ok {
			t.Errorf("predicted %v and it matched; the API showed %v", wrong.want, seen)
		}
	})
}

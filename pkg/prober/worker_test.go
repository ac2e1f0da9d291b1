package prober

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// newTestWorker is a worker of e's Manager for pod's first container, without its goroutine: the
// test calls doProbe, one turn at a time.
func newTestWorker(e *testEnv, kind Kind, pod *corev1.Pod) *worker {
	return newWorker(e.m, kind, pod, pod.Spec.Containers[0])
}

// Upstream worker_test.go TestDoProbe: what one turn does for each state of the pod and the
// container, for every probe kind (the container is Started for liveness and readiness, not yet
// for startup, so that each kind may probe).
func TestDoProbe(t *testing.T) {
	all := func(v bool) map[Kind]bool { return map[Kind]bool{Liveness: v, Readiness: v, Startup: v} }
	tests := []struct {
		name          string
		status        func(s *corev1.PodStatus) // nil: no status at all
		restartPolicy corev1.RestartPolicy
		container     func(c *corev1.Container) // the container's own restartPolicy and rules
		deleting      bool
		wantContinue  map[Kind]bool
		wantResult    map[Kind]string
	}{
		{name: "no pod status yet", wantContinue: all(true),
			wantResult: map[Kind]string{Liveness: "none", Readiness: "none", Startup: "none"}},
		{name: "pod failed: worker ends", status: func(s *corev1.PodStatus) { s.Phase = corev1.PodFailed }, wantContinue: all(false),
			wantResult: map[Kind]string{Liveness: "none", Readiness: "none", Startup: "none"}},
		{name: "pod succeeded: worker ends", status: func(s *corev1.PodStatus) { s.Phase = corev1.PodSucceeded }, wantContinue: all(false),
			wantResult: map[Kind]string{Liveness: "none", Readiness: "none", Startup: "none"}},
		{name: "container not created yet", status: func(s *corev1.PodStatus) { s.ContainerStatuses[0].Name = "other" }, wantContinue: all(true),
			wantResult: map[Kind]string{Liveness: "none", Readiness: "none", Startup: "none"}},
		{name: "container waiting: Failure, keep going", status: func(s *corev1.PodStatus) { s.ContainerStatuses[0].State = corev1.ContainerState{} },
			wantContinue: all(true), wantResult: map[Kind]string{Liveness: "Failure", Readiness: "Failure", Startup: "Failure"}},
		{name: "container exited, restartPolicy Never: Failure, worker ends", restartPolicy: corev1.RestartPolicyNever,
			status: func(s *corev1.PodStatus) {
				s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
			},
			wantContinue: all(false), wantResult: map[Kind]string{Liveness: "Failure", Readiness: "Failure", Startup: "Failure"}},
		{name: "container exited, restartPolicy Always: Failure, keep going", restartPolicy: corev1.RestartPolicyAlways,
			status: func(s *corev1.PodStatus) {
				s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
			},
			wantContinue: all(true), wantResult: map[Kind]string{Liveness: "Failure", Readiness: "Failure", Startup: "Failure"}},
		// KEP-5307 (ContainerRestartRules, on in v1.36): the runtime restarts the container, so
		// the worker waits for it.
		{name: "container exited 42, rule Restart on 42 under pod Never: Failure, keep going", restartPolicy: corev1.RestartPolicyNever,
			container: func(c *corev1.Container) {
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever)
				c.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
					ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
			},
			status: func(s *corev1.PodStatus) {
				s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}
			},
			wantContinue: all(true), wantResult: map[Kind]string{Liveness: "Failure", Readiness: "Failure", Startup: "Failure"}},
		{name: "container restartPolicy Never under pod Always, exited: Failure, worker ends", restartPolicy: corev1.RestartPolicyAlways,
			container: func(c *corev1.Container) { c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyNever) },
			status: func(s *corev1.PodStatus) {
				s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
			},
			wantContinue: all(false), wantResult: map[Kind]string{Liveness: "Failure", Readiness: "Failure", Startup: "Failure"}},
		// Ours, not upstream's: minikubelet's runtime does not restart all containers
		// (RestartAllContainers), so the condition does not keep a worker whose container is done.
		{name: "AllContainersRestarting does not keep the worker of a container that is done", restartPolicy: corev1.RestartPolicyNever,
			status: func(s *corev1.PodStatus) {
				s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
				s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.AllContainersRestarting, Status: corev1.ConditionTrue})
			},
			wantContinue: all(false), wantResult: map[Kind]string{Liveness: "Failure", Readiness: "Failure", Startup: "Failure"}},
		{name: "probe succeeds", status: func(*corev1.PodStatus) {}, wantContinue: all(true),
			wantResult: map[Kind]string{Liveness: "Success", Readiness: "Success", Startup: "Success"}},
		{name: "pod deleting: liveness and startup say Success and end, readiness probes on", status: func(*corev1.PodStatus) {}, deleting: true,
			wantContinue: map[Kind]bool{Liveness: false, Readiness: true, Startup: false},
			wantResult:   map[Kind]string{Liveness: "Success", Readiness: "Success", Startup: "Success"}},
	}
	for _, tc := range tests {
		for _, kind := range []Kind{Liveness, Readiness, Startup} {
			t.Run(fmt.Sprintf("%s/%s", tc.name, kind), func(t *testing.T) {
				e := newTestEnv(t)
				pod := podWithProbe(kind, execProbeSpec())
				pod.Spec.RestartPolicy = tc.restartPolicy
				if tc.container != nil {
					tc.container(&pod.Spec.Containers[0])
				}
				if tc.deleting {
					pod.DeletionTimestamp = ptr.To(metav1.NewTime(e.clock.Now()))
				}
				if tc.status != nil {
					s := runningStatus(e.clock.Now(), kind != Startup)
					tc.status(&s)
					e.status.set(testUID, s)
				}
				w := newTestWorker(e, kind, pod)
				if got := w.doProbe(e.ctx); got != tc.wantContinue[kind] {
					t.Errorf("doProbe = %v, want %v", got, tc.wantContinue[kind])
				}
				if got := get(e.m.resultsFor(kind), testContainerID); got != tc.wantResult[kind] {
					t.Errorf("result = %s, want %s", got, tc.wantResult[kind])
				}
			})
		}
	}
}

// Upstream TestInitialDelay and newWorker's initial values: a new container starts at readiness
// Failure, liveness Success, startup Unknown, and is not probed until initialDelaySeconds (whole
// seconds) have passed since its running StartedAt.
func TestInitialValueAndInitialDelay(t *testing.T) {
	for kind, initial := range map[Kind]string{Readiness: "Failure", Liveness: "Success", Startup: "UNKNOWN"} {
		t.Run(kind.String(), func(t *testing.T) {
			e := newTestEnv(t)
			spec := execProbeSpec()
			spec.InitialDelaySeconds, spec.FailureThreshold, spec.SuccessThreshold = 10, 1, 1
			e.exec.setReply(execReply{exitCode: 1})
			w := newTestWorker(e, kind, podWithProbe(kind, spec))
			e.status.set(testUID, runningStatus(e.clock.Now(), kind != Startup))

			for _, step := range []struct {
				after     time.Duration
				wantCalls int
				want      string
			}{
				{0, 0, initial},
				{9*time.Second + 999*time.Millisecond, 0, initial}, // 9.999 s counts as 9
				{time.Millisecond, 1, "Failure"},                   // 10 s: probed
			} {
				e.clock.Step(step.after)
				w.doProbe(e.ctx)
				if got := e.exec.count(); got != step.wantCalls {
					t.Fatalf("after %v: %d probes, want %d", step.after, got, step.wantCalls)
				}
				if got := get(w.results, testContainerID); got != step.want {
					t.Fatalf("after %v: result %s, want %s", step.after, got, step.want)
				}
			}
		})
	}
}

// Upstream TestFailureThreshold, TestSuccessThreshold, TestStartupProbe*Threshold: a result is
// recorded only after failureThreshold / successThreshold equal runs in a row; a different run
// starts counting again.
func TestThresholds(t *testing.T) {
	tests := []struct {
		name              string
		kind              Kind
		success, failure  int32
		exitCodes         []int32
		want              []string
		stopAfterVerdicts bool
	}{
		{name: "readiness failureThreshold 3", kind: Readiness, success: 1, failure: 3,
			exitCodes: []int32{0, 0, 1, 1, 1, 0, 1},
			want:      []string{"Success", "Success", "Success", "Success", "Failure", "Success", "Success"}},
		{name: "readiness successThreshold 3", kind: Readiness, success: 3, failure: 1,
			exitCodes: []int32{0, 0, 0, 1, 0, 0},
			want:      []string{"Failure", "Failure", "Success", "Failure", "Failure", "Failure"}},
		{name: "liveness: a success resets the failure run", kind: Liveness, success: 1, failure: 3,
			exitCodes: []int32{1, 1, 0, 1, 1, 1},
			want:      []string{"Success", "Success", "Success", "Success", "Success", "Failure"}},
		{name: "startup failureThreshold 2", kind: Startup, success: 1, failure: 2,
			exitCodes: []int32{1, 1}, want: []string{"UNKNOWN", "Failure"}},
		{name: "startup success", kind: Startup, success: 1, failure: 3,
			exitCodes: []int32{1, 0}, want: []string{"UNKNOWN", "Success"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			spec := execProbeSpec()
			spec.SuccessThreshold, spec.FailureThreshold = tc.success, tc.failure
			w := newTestWorker(e, tc.kind, podWithProbe(tc.kind, spec))
			e.status.set(testUID, runningStatus(e.clock.Now(), tc.kind != Startup))
			for i, code := range tc.exitCodes {
				e.exec.setReply(execReply{exitCode: code})
				w.doProbe(e.ctx)
				if got := get(w.results, testContainerID); got != tc.want[i] {
					t.Fatalf("run %d (exit %d): result %s, want %s", i+1, code, got, tc.want[i])
				}
			}
		})
	}
}

// Upstream TestOnHoldOnLivenessOrStartupCheckFailure, TestResultRunOnLivenessCheckFailure and
// TestStartupProbeSuccessThreshold: after a liveness Failure or a startup verdict the worker does
// not probe that container again; a new container ID forgets the old result, starts from the
// initial value and resumes probing with a fresh run count.
func TestOnHoldUntilNewContainer(t *testing.T) {
	tests := []struct {
		kind    Kind
		exit    int32
		verdict string
		initial string
	}{
		{Liveness, 1, "Failure", "Success"},
		{Startup, 1, "Failure", "UNKNOWN"},
		{Startup, 0, "Success", "UNKNOWN"},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String()+"/"+tc.verdict, func(t *testing.T) {
			e := newTestEnv(t)
			spec := execProbeSpec()
			spec.FailureThreshold = 1
			w := newTestWorker(e, tc.kind, podWithProbe(tc.kind, spec))
			e.status.set(testUID, runningStatus(e.clock.Now(), tc.kind == Liveness))
			e.exec.setReply(execReply{exitCode: tc.exit})
			w.doProbe(e.ctx)
			if got := get(w.results, testContainerID); got != tc.verdict || e.exec.count() != 1 {
				t.Fatalf("first turn: result %s after %d probes, want %s after 1", got, e.exec.count(), tc.verdict)
			}
			w.doProbe(e.ctx)
			w.doProbe(e.ctx)
			if e.exec.count() != 1 {
				t.Fatalf("on hold: %d probes, want still 1", e.exec.count())
			}

			// The container is restarted: a new ID.
			s := runningStatus(e.clock.Now(), tc.kind == Liveness)
			s.ContainerStatuses[0].ContainerID = "containerd://def"
			e.status.set(testUID, s)
			e.exec.setReply(execReply{exitCode: 1})
			w.doProbe(e.ctx)
			if got := get(w.results, testContainerID); got != "none" {
				t.Errorf("old container's result = %s, want forgotten", got)
			}
			if e.exec.count() != 2 {
				t.Errorf("new container: %d probes, want 2 (resumed)", e.exec.count())
			}
			if got := get(w.results, "containerd://def"); got != "Failure" {
				t.Errorf("new container's result = %s, want Failure", got)
			}
		})
	}
}

// Upstream TestLivenessProbeDisabledByStarted and TestStartupProbeDisabledByStarted: liveness and
// readiness wait until the container has Started (its startup probe succeeded); startup stops
// probing once it has.
func TestStartupGatesOtherProbes(t *testing.T) {
	tests := []struct {
		kind      Kind
		started   bool
		wantProbe bool
	}{
		{Liveness, false, false},
		{Liveness, true, true},
		{Readiness, false, false},
		{Readiness, true, true},
		{Startup, false, true},
		{Startup, true, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/started=%v", tc.kind, tc.started), func(t *testing.T) {
			e := newTestEnv(t)
			w := newTestWorker(e, tc.kind, podWithProbe(tc.kind, execProbeSpec()))
			e.status.set(testUID, runningStatus(e.clock.Now(), tc.started))
			w.doProbe(e.ctx)
			if got := e.exec.count() == 1; got != tc.wantProbe {
				t.Errorf("probed = %v, want %v", got, tc.wantProbe)
			}
		})
	}
}

// Upstream TestChangeContainerStatusOnKubeletRestart (the gate is off by default in v1.36): a
// container running since before the kubelet started (less 10 s) does not get the initial value,
// so a ready container does not flap to not ready; a sidecar that had Started keeps its startup
// Success. One that started after gets the initial value as usual.
func TestKubeletRestartKeepsResults(t *testing.T) {
	t.Run("container running before the kubelet", func(t *testing.T) {
		e := newTestEnv(t)
		spec := execProbeSpec()
		spec.InitialDelaySeconds = 3600 * 2
		w := newTestWorker(e, Readiness, podWithProbe(Readiness, spec))
		e.status.set(testUID, runningStatus(e.m.start.Add(-11*time.Second), true))
		w.doProbe(e.ctx)
		if got := get(w.results, testContainerID); got != "none" {
			t.Errorf("result = %s, want none (no initial Failure)", got)
		}
	})
	t.Run("container started within the grace", func(t *testing.T) {
		e := newTestEnv(t)
		spec := execProbeSpec()
		spec.InitialDelaySeconds = 3600 * 2
		w := newTestWorker(e, Readiness, podWithProbe(Readiness, spec))
		e.status.set(testUID, runningStatus(e.m.start.Add(-9*time.Second), true))
		w.doProbe(e.ctx)
		if got := get(w.results, testContainerID); got != "Failure" {
			t.Errorf("result = %s, want the initial Failure", got)
		}
	})
	t.Run("sidecar that had started", func(t *testing.T) {
		e := newTestEnv(t)
		spec := execProbeSpec()
		spec.InitialDelaySeconds = 3600 * 2
		pod := podWithProbe(Startup, spec)
		pod.Spec.InitContainers = []corev1.Container{pod.Spec.Containers[0]}
		pod.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		pod.Spec.Containers = []corev1.Container{{Name: "main"}}
		s := runningStatus(e.m.start.Add(-time.Hour), true)
		s.InitContainerStatuses, s.ContainerStatuses = s.ContainerStatuses, nil
		e.status.set(testUID, s)
		w := newWorker(e.m, Startup, pod, pod.Spec.InitContainers[0])
		w.doProbe(e.ctx)
		if got := get(w.results, testContainerID); got != "Success" {
			t.Errorf("startup result = %s, want Success", got)
		}
	})
}

// Upstream prober.go runProbeWithRetries and worker.go: a probe that cannot run is tried 3 times,
// recorded as an Unhealthy Event "… probe errored and resulted in unknown state: …", and its run
// does not count: the result stays what it was.
func TestProbeErrorDoesNotCount(t *testing.T) {
	e := newTestEnv(t)
	spec := execProbeSpec()
	spec.FailureThreshold = 1
	w := newTestWorker(e, Liveness, podWithProbe(Liveness, spec))
	e.status.set(testUID, runningStatus(e.clock.Now(), true))
	e.exec.setReply(execReply{err: errors.New("runtime is down")})
	w.doProbe(e.ctx)
	if got := e.exec.count(); got != 3 {
		t.Errorf("%d tries, want 3", got)
	}
	if got := get(w.results, testContainerID); got != "Success" {
		t.Errorf("result = %s, want Success (the initial value: an error is not a failure)", got)
	}
	want := []event{{eventType: "Warning", reason: "Unhealthy",
		text: "Liveness probe errored and resulted in unknown state: runtime is down"}}
	if got := eventsWithoutRef(e.recorder.all()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events = %v, want %v", got, want)
	}
}

// Upstream prober.go recordContainerEvent: "<Kind> probe failed: <output>" as a Warning
// Unhealthy Event on the pod, with the container's field path (spec.containers{name} or
// spec.initContainers{name} for a sidecar). The journal records each result change (ours).
func TestFailureEventAndJournal(t *testing.T) {
	for _, sidecar := range []bool{false, true} {
		t.Run(fmt.Sprintf("sidecar=%v", sidecar), func(t *testing.T) {
			e := newTestEnv(t)
			spec := execProbeSpec()
			spec.FailureThreshold = 1
			pod := podWithProbe(Readiness, spec)
			s := runningStatus(e.clock.Now(), true)
			wantPath := "spec.containers{c}"
			if sidecar {
				pod.Spec.InitContainers = []corev1.Container{pod.Spec.Containers[0]}
				pod.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
				pod.Spec.Containers = []corev1.Container{{Name: "main"}}
				s.InitContainerStatuses, s.ContainerStatuses = s.ContainerStatuses, nil
				wantPath = "spec.initContainers{c}"
			}
			e.status.set(testUID, s)
			e.exec.setReply(execReply{stdout: []byte("db "), stderr: []byte("unreachable"), exitCode: 2})
			newWorker(e.m, Readiness, pod, probedContainers(pod)[len(probedContainers(pod))-1]).doProbe(e.ctx)

			events := e.recorder.all()
			if len(events) != 1 {
				t.Fatalf("events = %v, want one", events)
			}
			ev := events[0]
			if ev.eventType != "Warning" || ev.reason != "Unhealthy" || ev.text != "Readiness probe failed: db unreachable" {
				t.Errorf("event = %s %s %q", ev.eventType, ev.reason, ev.text)
			}
			if ev.ref == nil || ev.ref.Kind != "Pod" || ev.ref.Name != "p" || ev.ref.Namespace != "ns" || ev.ref.UID != testUID || ev.ref.FieldPath != wantPath {
				t.Errorf("event object = %+v, want pod ns/p with fieldPath %s", ev.ref, wantPath)
			}

			// The journal: the initial Failure, then nothing (Failure again is no change).
			got := e.journal.Read(0, journalFilter()).Events
			if len(got) != 1 || got[0].Kind != "readiness" || got[0].Pod != "ns/p" ||
				got[0].Fields["result"] != "Failure" || got[0].Fields["container"] != "c" {
				t.Errorf("journal = %+v", got)
			}
		})
	}
}

// Our journal records the output of the probe that changed the result.
func TestJournalRecordsOutput(t *testing.T) {
	e := newTestEnv(t)
	w := newTestWorker(e, Readiness, podWithProbe(Readiness, execProbeSpec()))
	e.status.set(testUID, runningStatus(e.clock.Now(), true))
	e.exec.setReply(execReply{stdout: []byte("ok")})
	w.doProbe(e.ctx)
	got := e.journal.Read(0, journalFilter()).Events
	if len(got) != 2 || got[1].Fields["result"] != "Success" || got[1].Fields["output"] != "ok" {
		t.Errorf("journal = %+v, want the initial Failure then Success with output ok", got)
	}
}

// Upstream worker.run: only a kubelet that started less than a period ago delays a new worker's
// first probe, by a random part of one period.
func TestStartDelay(t *testing.T) {
	tests := []struct {
		period, since time.Duration
		r             float64
		want          time.Duration
	}{
		{10 * time.Second, 0, 0.5, 5 * time.Second},
		{10 * time.Second, 9 * time.Second, 0.99, 9900 * time.Millisecond},
		{10 * time.Second, 10 * time.Second, 0.5, 0},
		{10 * time.Second, time.Hour, 0.5, 0},
	}
	for _, tc := range tests {
		if got := startDelay(tc.period, tc.since, tc.r); got != tc.want {
			t.Errorf("startDelay(%v, %v, %v) = %v, want %v", tc.period, tc.since, tc.r, got, tc.want)
		}
	}
}

func eventsWithoutRef(events []event) []event {
	for i := range events {
		events[i].ref = nil
	}
	return events
}

package main

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// lab09Event is an Event about pod from the kubelet (or another source), first seen at first.
func lab09Event(source, reason, message string, first time.Time) corev1.Event {
	return corev1.Event{Source: corev1.EventSource{Component: source}, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(first)}
}

// Lab 09: a restart alone is not enough; the kubelet must have said it was the liveness probe.
func TestLivenessRestarted(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := running("lab09-liveness", "n")
	unhealthy := lab09Event("kubelet", "Unhealthy", "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory", now)
	killing := lab09Event("kubelet", "Killing", "Container liveness failed liveness probe, will be restarted", now)
	if r := livenessRestarted("default/lab09-liveness", nil, "n", nil); r.ok || !strings.Contains(r.fix, "liveness.yaml") {
		t.Errorf("no pod: %s", r)
	}
	if r := livenessRestarted("default/lab09-liveness", pod, "n", []corev1.Event{unhealthy, killing}); r.ok || !strings.Contains(r.fix, "45 s") {
		t.Errorf("never restarted: %s", r)
	}
	pod.Status.ContainerStatuses[0].RestartCount = 1
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 143, Reason: "Error"}
	tests := []struct {
		name   string
		events []corev1.Event
		ok     bool
	}{
		{"restarted, no Events", nil, false},
		{"the Unhealthy Event is not the kubelet's", []corev1.Event{lab09Event("someone", "Unhealthy", unhealthy.Message, now), killing}, false},
		{"no Killing yet", []corev1.Event{unhealthy}, false},
		{"Unhealthy and Killing", []corev1.Event{killing, unhealthy}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := livenessRestarted("default/lab09-liveness", pod, "n", tc.events); r.ok != tc.ok {
				t.Errorf("got %s, want ok=%v", r, tc.ok)
			}
		})
	}
}

// Lab 09: readiness must have failed (404: the file removed) and come back, with no restart.
func TestReadinessFlipped(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	failed := lab09Event("kubelet", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404", now)
	refused := lab09Event("kubelet", "Unhealthy", "Readiness probe failed: Get \"http://127.88.0.3:8080/ready\": connection refused", now)
	pod := func(ready corev1.ConditionStatus, since time.Time, restarts int32) *corev1.Pod {
		p := running("lab09-ready", "n")
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(since)}}
		p.Status.ContainerStatuses[0].RestartCount = restarts
		return p
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		events []corev1.Event
		ok     bool
		says   string
	}{
		{"exercise 2 skipped: the readiness probe never failed", pod(corev1.ConditionTrue, now.Add(-time.Minute), 0), nil, false, "rm /www/ready"},
		{"failed only before the server listened", pod(corev1.ConditionTrue, now.Add(time.Second), 0), []corev1.Event{refused}, false, "rm /www/ready"},
		{"not Ready now", pod(corev1.ConditionFalse, now.Add(6*time.Second), 0), []corev1.Event{failed}, false, "touch /www/ready"},
		{"Ready since before the failure", pod(corev1.ConditionTrue, now.Add(-time.Minute), 0), []corev1.Event{failed}, false, "gone False and back"},
		{"restarted", pod(corev1.ConditionTrue, now.Add(10*time.Second), 1), []corev1.Event{failed}, false, "never restarts"},
		{"both ways", pod(corev1.ConditionTrue, now.Add(10*time.Second), 0), []corev1.Event{failed}, true, "Ready again"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := readinessFlipped("default/lab09-ready", tc.pod, "n", tc.events)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

// Lab 09: init containers one after the other, the app after the last; a failing one crash-loops
// under Always and fails the pod under Never; a sidecar starts before the app and stops after it.
func TestInitContainersAndSidecar(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 12, 0, s, 0, time.UTC)) }
	done := func(name string, start, end int, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, ContainerID: "minikubelet-fake://" + name, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: at(start), FinishedAt: at(end)}}}
	}
	initPod := running("lab09-init", "n")
	initPod.Spec.InitContainers = []corev1.Container{{Name: "fetch"}, {Name: "migrate"}}
	initPod.Status.Conditions = append(initPod.Status.Conditions, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue})
	initPod.Status.ContainerStatuses[0].State.Running.StartedAt = at(17)
	initPod.Status.InitContainerStatuses = []corev1.ContainerStatus{done("fetch", 0, 8, 0), done("migrate", 4, 16, 0)}
	if r := initInOrder("default/lab09-init", initPod, "n"); r.ok || !strings.Contains(r.what, "before fetch ended") {
		t.Errorf("overlapping init containers: %s", r)
	}
	initPod.Status.InitContainerStatuses[1] = done("migrate", 8, 16, 0)
	if r := initInOrder("default/lab09-init", initPod, "n"); !r.ok {
		t.Errorf("in order: %s", r)
	}
	initPod.Status.InitContainerStatuses[1] = done("migrate", 8, 16, 1)
	if r := initInOrder("default/lab09-init", initPod, "n"); r.ok {
		t.Errorf("migrate failed: %s", r)
	}

	crash := running("lab09-init-crash", "n")
	crash.Spec.InitContainers = []corev1.Container{{Name: "check-db"}}
	crash.Status.Phase = corev1.PodPending
	crash.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	crash.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "check-db", RestartCount: 2,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}},
		State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	if r := initCrashLooping("default/lab09-init-crash", crash, "n"); r.ok {
		t.Errorf("between back-offs (Init:Error): %s", r)
	}
	crash.Status.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if r := initCrashLooping("default/lab09-init-crash", crash, "n"); !r.ok {
		t.Errorf("Init:CrashLoopBackOff: %s", r)
	}
	crash.Status.ContainerStatuses[0] = done("app", 1, 2, 0)
	if r := initCrashLooping("default/lab09-init-crash", crash, "n"); r.ok {
		t.Errorf("the app ran: %s", r)
	}

	never := running("lab09-init-never", "n")
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	never.Spec.InitContainers = []corev1.Container{{Name: "check-db"}}
	never.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	never.Status.InitContainerStatuses = []corev1.ContainerStatus{done("check-db", 0, 0, 1)}
	if r := initFailed("default/lab09-init-never", never, "n"); r.ok {
		t.Errorf("still Running: %s", r)
	}
	never.Status.Phase = corev1.PodFailed
	if r := initFailed("default/lab09-init-never", never, "n"); !r.ok {
		t.Errorf("Failed: %s", r)
	}

	sidecar := running("lab09-sidecar", "n")
	sidecar.Spec.RestartPolicy = corev1.RestartPolicyNever
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
	sidecar.Spec.Containers = []corev1.Container{{Name: "job"}}
	sidecar.Status.Phase = corev1.PodSucceeded
	sidecar.Status.ContainerStatuses[0] = done("job", 2, 12, 0)
	sidecar.Status.InitContainerStatuses = []corev1.ContainerStatus{done("proxy", 0, 11, 143)}
	if r := sidecarStoppedAfterApp("default/lab09-sidecar", sidecar, "n"); r.ok || !strings.Contains(r.fix, "termination_order.go") {
		t.Errorf("sidecar stopped before the app: %s", r)
	}
	sidecar.Status.InitContainerStatuses[0] = done("proxy", 0, 12, 143)
	if r := sidecarStoppedAfterApp("default/lab09-sidecar", sidecar, "n"); !r.ok {
		t.Errorf("sidecar stopped after the app: %s", r)
	}
	sidecar.Spec.InitContainers[0].RestartPolicy = nil
	if r := sidecarStoppedAfterApp("default/lab09-sidecar", sidecar, "n"); r.ok {
		t.Errorf("no sidecar: %s", r)
	}
}

// Lab 09, exercise 6: the deleted lab09-shutdown, in the kubelet's journal. Skipped (the pod was
// never deleted, or never created), there is no DELETE followed by both StopContainer calls:
// missing, and the fix names exercise 6.
func TestLab09SkippedShutdown(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	seq := uint64(0)
	ev := func(uid, source, kind string, ms int, container string) journal.Event {
		seq++
		e := journal.Event{Seq: seq, Pod: "default/lab09-shutdown", UID: uid, Source: source, Kind: kind, Time: at.Add(time.Duration(ms) * time.Millisecond)}
		if container != "" {
			e.Fields = map[string]string{"container": container}
		}
		return e
	}
	started := func(uid string) []journal.Event {
		return []journal.Event{ev(uid, journal.SourceCRI, "StartContainer", 0, "log-shipper"), ev(uid, journal.SourceCRI, "StartContainer", 10, "app")}
	}
	deleted := func(uid string, first, second string) []journal.Event {
		return []journal.Event{ev(uid, journal.SourceSyncLoop, "configCh DELETE", 1000, ""),
			ev(uid, journal.SourceCRI, "StopContainer", 6000, first), ev(uid, journal.SourceCRI, "StopContainer", 6001, second)}
	}
	tests := []struct {
		name   string
		events []journal.Event
		ok     bool
		says   string
	}{
		{"exercise 6 skipped: never created", nil, false, "exercise 6: kubectl apply"},
		{"exercise 6 half done: created, not deleted", started("u1"), false, "exercise 6: kubectl apply"},
		{"stopped before any DELETE (a restart, not a deletion)", append(started("u1"), ev("u1", journal.SourceCRI, "StopContainer", 50, "app"), ev("u1", journal.SourceCRI, "StopContainer", 60, "log-shipper")), false, "no deletion"},
		{"the sidecar first", append(started("u1"), deleted("u1", "log-shipper", "app")...), false, "log-shipper was stopped before app"},
		{"done", append(started("u1"), deleted("u1", "app", "log-shipper")...), true, "app stopped 5s later (its preStop hook), then log-shipper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := appStoppedFirst("default/lab09-shutdown", tc.events); r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

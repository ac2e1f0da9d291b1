package prober

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Upstream prober_manager_test.go TestUpdatePodStatus (and the kubelet-restart cases of v1.36):
// Started and Ready of each container status from the results, the probes the container has,
// and whether it runs; a readiness probe that has not succeeded is triggered at once.
func TestUpdatePodStatus(t *testing.T) {
	running := func(s *corev1.ContainerStatus) {
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC))}}
	}
	tests := []struct {
		name        string
		container   corev1.Container
		status      func(s *corev1.ContainerStatus)
		startup     *Result // the startup result, if any
		readiness   *Result
		podReady    bool // the pod's Ready condition in the API
		restarted   bool // the container runs since before the kubelet started
		wantStarted bool
		wantReady   bool
		wantTrigger bool
	}{
		{name: "no probes, running: started and ready", status: running, wantStarted: true, wantReady: true},
		{name: "no probes, waiting: neither", status: func(*corev1.ContainerStatus) {}},
		{name: "startup probe not run yet: not started", container: withProbe(Startup), status: running},
		{name: "startup Success: started, ready without readiness probe", container: withProbe(Startup), status: running,
			startup: ptr.To(Success), wantStarted: true, wantReady: true},
		{name: "startup Failure: not started", container: withProbe(Startup), status: running, startup: ptr.To(Failure)},
		{name: "startup Unknown: not started", container: withProbe(Startup), status: running, startup: ptr.To(Unknown)},
		{name: "no startup result, but Started before the kubelet restarted", container: withProbe(Startup),
			status: func(s *corev1.ContainerStatus) { running(s); s.Started = ptr.To(true) }, wantStarted: true, wantReady: true},
		{name: "readiness not run yet: not ready, probe now", container: withProbe(Readiness), status: running,
			wantStarted: true, wantTrigger: true},
		{name: "readiness Success: ready", container: withProbe(Readiness), status: running, readiness: ptr.To(Success),
			wantStarted: true, wantReady: true},
		{name: "readiness Failure: not ready, probe now", container: withProbe(Readiness), status: running, readiness: ptr.To(Failure),
			wantStarted: true, wantTrigger: true},
		{name: "kubelet restarted, no readiness result, pod was Ready: stays ready", container: withProbe(Readiness), status: running,
			restarted: true, podReady: true, wantStarted: true, wantReady: true, wantTrigger: true},
		{name: "kubelet restarted, no readiness result, pod was not Ready: not ready", container: withProbe(Readiness), status: running,
			restarted: true, wantStarted: true, wantTrigger: true},
		{name: "kubelet restarted, readiness Failure: not ready", container: withProbe(Readiness), status: running,
			restarted: true, podReady: true, readiness: ptr.To(Failure), wantStarted: true, wantTrigger: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			tc.container.Name = "c"
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: testUID},
				Spec: corev1.PodSpec{Containers: []corev1.Container{tc.container}}}
			if tc.podReady {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
			e.m.AddPod(pod) // before Run: the workers exist, their goroutines do not
			cs := corev1.ContainerStatus{Name: "c", ContainerID: testContainerID}
			tc.status(&cs)
			if tc.restarted {
				cs.State.Running.StartedAt = metav1.NewTime(e.m.start.Add(-time.Minute))
			}
			if tc.startup != nil {
				e.m.cfg.Startup.set(context.Background(), testContainerID, *tc.startup, pod)
			}
			if tc.readiness != nil {
				e.m.cfg.Readiness.set(context.Background(), testContainerID, *tc.readiness, pod)
			}
			status := &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}}

			e.m.UpdatePodStatus(pod, status)

			got := status.ContainerStatuses[0]
			if got.Started == nil || *got.Started != tc.wantStarted {
				t.Errorf("Started = %v, want %v", got.Started, tc.wantStarted)
			}
			if got.Ready != tc.wantReady {
				t.Errorf("Ready = %v, want %v", got.Ready, tc.wantReady)
			}
			triggered := false
			if w, ok := e.m.getWorker(testUID, "c", Readiness); ok {
				triggered = len(w.triggerCh) == 1
			}
			if triggered != tc.wantTrigger {
				t.Errorf("readiness probe triggered = %v, want %v", triggered, tc.wantTrigger)
			}
		})
	}
}

// Upstream UpdatePodStatus for init containers: a plain init container is Ready once it exited 0
// (and never probed); a sidecar (restartPolicy Always) follows the rules of containers.
func TestUpdatePodStatusInitContainers(t *testing.T) {
	e := newTestEnv(t)
	sidecar := withProbe(Readiness)
	sidecar.Name, sidecar.RestartPolicy = "sidecar", ptr.To(corev1.ContainerRestartPolicyAlways)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: testUID}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init-ok"}, {Name: "init-failed"}, sidecar, {Name: "plain-sidecar", RestartPolicy: sidecar.RestartPolicy}},
		Containers:     []corev1.Container{{Name: "main"}},
	}}
	e.m.AddPod(pod)
	e.m.cfg.Readiness.set(context.Background(), "containerd://sidecar", Success, pod)
	exited := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
	}
	runningState := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(e.clock.Now())}}
	status := &corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
		{Name: "init-ok", ContainerID: "containerd://ok", State: exited(0)},
		{Name: "init-failed", ContainerID: "containerd://failed", State: exited(1)},
		{Name: "sidecar", ContainerID: "containerd://sidecar", State: runningState},
		{Name: "plain-sidecar", ContainerID: "containerd://plain", State: runningState},
	}}

	e.m.UpdatePodStatus(pod, status)

	want := map[string]bool{"init-ok": true, "init-failed": false, "sidecar": true, "plain-sidecar": true}
	for _, cs := range status.InitContainerStatuses {
		if cs.Ready != want[cs.Name] {
			t.Errorf("%s: Ready = %v, want %v", cs.Name, cs.Ready, want[cs.Name])
		}
		if cs.Started == nil {
			t.Errorf("%s: Started not set", cs.Name)
		}
	}
}

// withProbe is a container with an exec probe of kind.
func withProbe(kind Kind) corev1.Container {
	return podWithProbe(kind, execProbeSpec()).Spec.Containers[0]
}

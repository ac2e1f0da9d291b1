package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func apiPod(policy corev1.RestartPolicy) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
		Spec: corev1.PodSpec{RestartPolicy: policy, Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
}

func readySandboxes() []*runtimeapi.PodSandboxStatus {
	return []*runtimeapi.PodSandboxStatus{{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_READY}}
}

func inst(id string, state runtimeapi.ContainerState, exit int32, restarts int) *kubecontainer.ContainerStatus {
	return &kubecontainer.ContainerStatus{ID: id, Name: "app", State: state, ExitCode: exit, RestartCount: restarts,
		StartedAt: now.Add(-time.Minute), FinishedAt: now}
}

// Upstream getPhase and convertToAPIContainerStatuses, one row per situation a student meets.
func TestGenerateAPIPodStatus(t *testing.T) {
	running := runtimeapi.ContainerState_CONTAINER_RUNNING
	exited := runtimeapi.ContainerState_CONTAINER_EXITED
	backoff := map[string]kuberuntime.ContainerError{"app": {Name: "app", Reason: kuberuntime.ReasonCrashLoopBackOff, Message: "back-off 10s restarting failed container"}}
	tests := []struct {
		name       string
		policy     corev1.RestartPolicy
		containers []*kubecontainer.ContainerStatus
		reasons    map[string]kuberuntime.ContainerError
		wantPhase  corev1.PodPhase
		wantReady  bool
		check      func(t *testing.T, cs corev1.ContainerStatus)
	}{
		{"nothing created yet", corev1.RestartPolicyAlways, nil, nil, corev1.PodPending, false, func(t *testing.T, cs corev1.ContainerStatus) {
			if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" {
				t.Errorf("state = %+v, want waiting ContainerCreating", cs.State)
			}
		}},
		{"running", corev1.RestartPolicyAlways, []*kubecontainer.ContainerStatus{inst("c1", running, 0, 0)}, nil, corev1.PodRunning, true, func(t *testing.T, cs corev1.ContainerStatus) {
			if cs.State.Running == nil || !cs.Ready || cs.ContainerID != "fake://c1" {
				t.Errorf("status = %+v", cs)
			}
		}},
		{"crash loop shows CrashLoopBackOff with the last exit", corev1.RestartPolicyAlways,
			[]*kubecontainer.ContainerStatus{inst("c2", exited, 1, 3), inst("c1", exited, 1, 2)}, backoff, corev1.PodRunning, false,
			func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.RestartCount != 3 ||
					cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
					t.Errorf("status = %+v", cs)
				}
			}},
		{"Never + exit 1 is Failed", corev1.RestartPolicyNever, []*kubecontainer.ContainerStatus{inst("c1", exited, 1, 0)}, nil, corev1.PodFailed, false,
			func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Terminated == nil || cs.State.Terminated.Reason != "Error" {
					t.Errorf("state = %+v", cs.State)
				}
			}},
		{"Never + exit 0 is Succeeded", corev1.RestartPolicyNever, []*kubecontainer.ContainerStatus{inst("c1", exited, 0, 0)}, nil, corev1.PodSucceeded, false,
			func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Terminated == nil || cs.State.Terminated.Reason != "Completed" {
					t.Errorf("state = %+v", cs.State)
				}
			}},
		{"OnFailure + exit 0 is Succeeded", corev1.RestartPolicyOnFailure, []*kubecontainer.ContainerStatus{inst("c1", exited, 0, 0)}, nil, corev1.PodSucceeded, false, nil},
		{"OnFailure + exit 1 restarts: Running", corev1.RestartPolicyOnFailure, []*kubecontainer.ContainerStatus{inst("c1", exited, 1, 0)}, nil, corev1.PodRunning, false, nil},
		{"image pull failing", corev1.RestartPolicyAlways, nil, map[string]kuberuntime.ContainerError{"app": {Reason: kuberuntime.ReasonErrImagePull, Message: "registry down"}}, corev1.PodPending, false,
			func(t *testing.T, cs corev1.ContainerStatus) {
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ErrImagePull" {
					t.Errorf("state = %+v", cs.State)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := apiPod(tc.policy)
			rs := &kubecontainer.PodStatus{ID: "u1", IPs: []string{"10.88.0.5"}, Sandboxes: readySandboxes(), Containers: tc.containers}
			st := generateAPIPodStatus(pod, rs, statusInputs{nodeIP: "127.0.0.1", runtimeName: "fake", reasons: tc.reasons, now: now})
			if st.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tc.wantPhase)
			}
			var ready corev1.ConditionStatus
			for _, c := range st.Conditions {
				if c.Type == corev1.PodReady {
					ready = c.Status
				}
			}
			if (ready == corev1.ConditionTrue) != tc.wantReady {
				t.Errorf("Ready = %s, want %v", ready, tc.wantReady)
			}
			if st.PodIP != "10.88.0.5" || st.HostIP != "127.0.0.1" || st.StartTime == nil {
				t.Errorf("podIP %s hostIP %s startTime %v", st.PodIP, st.HostIP, st.StartTime)
			}
			if tc.check != nil {
				tc.check(t, st.ContainerStatuses[0])
			}
		})
	}
}

// A terminal phase is final. (Transition times are the status manager's: prepareStatus.)
func TestAPIStatusKeepsTerminalPhase(t *testing.T) {
	pod := apiPod(corev1.RestartPolicyNever)
	pod.Status.Phase = corev1.PodSucceeded
	rs := &kubecontainer.PodStatus{ID: "u1"}
	st := generateAPIPodStatus(pod, rs, statusInputs{nodeIP: "127.0.0.1", now: now})
	if st.Phase != corev1.PodSucceeded {
		t.Errorf("phase = %s, want it to stay Succeeded", st.Phase)
	}
}

// A container that ended and then vanished from the runtime (a restarted kubelet with an empty
// runtime, container GC) keeps its terminated state until a new instance runs, as upstream: the
// API server refuses a terminated container of a restartPolicy Never pod going back to waiting, so
// anything else is a PATCH that fails every sync.
func TestLostContainerKeepsItsTermination(t *testing.T) {
	terminated := corev1.ContainerStatus{Name: "app", ContainerID: "fake://c1", RestartCount: 2,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}
	for _, policy := range []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyAlways} {
		pod := apiPod(policy)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{terminated}}
		st := generateAPIPodStatus(pod, &kubecontainer.PodStatus{}, statusInputs{now: now, runtimeName: "fake", nodeIP: "127.0.0.1"})
		cs := st.ContainerStatuses[0]
		if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 1 || cs.ContainerID != "fake://c1" || cs.RestartCount != 2 || cs.Ready {
			t.Errorf("%s: status %+v; want the old termination kept, not ready", policy, cs)
		}
	}
	// A container that was running when the runtime lost it is waiting again, with its counts.
	running := corev1.ContainerStatus{Name: "app", RestartCount: 3, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	pod := apiPod(corev1.RestartPolicyAlways)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running}}
	cs := generateAPIPodStatus(pod, &kubecontainer.PodStatus{}, statusInputs{now: now, runtimeName: "fake", nodeIP: "127.0.0.1"}).ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ContainerCreating" || cs.RestartCount != 3 {
		t.Errorf("lost running container: %+v, want waiting ContainerCreating with restartCount 3", cs)
	}
}

package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// initAPIPod has init containers (names starting "side" are sidecars) before its "app" container.
func initAPIPod(policy corev1.RestartPolicy, inits ...string) *corev1.Pod {
	pod := apiPod(policy)
	for _, n := range inits {
		c := corev1.Container{Name: n, Image: "busybox"}
		if len(n) >= 4 && n[:4] == "side" {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	return pod
}

func named(name, id string, state runtimeapi.ContainerState, exit int32) *kubecontainer.ContainerStatus {
	c := inst(id, state, exit, 0)
	c.Name = name
	return c
}

func condition(st corev1.PodStatus, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}

// What `kubectl get pods` and `kubectl describe pod` show of a pod with init containers and
// sidecars: phase, waiting reasons (kubectl's Init:N/M, Init:CrashLoopBackOff, PodInitializing
// come from these), and the conditions with upstream's reasons and messages.
func TestInitContainerStatus(t *testing.T) {
	running := runtimeapi.ContainerState_CONTAINER_RUNNING
	exited := runtimeapi.ContainerState_CONTAINER_EXITED
	backoff := map[string]kuberuntime.ContainerError{"init-a": {Name: "init-a", Reason: kuberuntime.ReasonCrashLoopBackOff, Message: "back-off 10s restarting failed container"}}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		containers []*kubecontainer.ContainerStatus
		reasons    map[string]kuberuntime.ContainerError
		wantPhase  corev1.PodPhase
		// wantInit is "status reason message" of the Initialized condition; wantReady the same of Ready.
		wantInit, wantReady string
		check               func(t *testing.T, st corev1.PodStatus)
	}{
		{"first init container running: Pending, app waits PodInitializing", initAPIPod(corev1.RestartPolicyAlways, "init-a", "init-b"),
			[]*kubecontainer.ContainerStatus{named("init-a", "i1", running, 0)}, nil, corev1.PodPending,
			"False ContainersNotInitialized containers with incomplete status: [init-a init-b]",
			"False ContainersNotReady containers with unready status: [app]",
			func(t *testing.T, st corev1.PodStatus) {
				if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
					t.Errorf("app state = %+v, want waiting PodInitializing", st.ContainerStatuses[0].State)
				}
				if w := st.InitContainerStatuses[1].State.Waiting; w == nil || w.Reason != "PodInitializing" {
					t.Errorf("init-b state = %+v, want waiting PodInitializing", st.InitContainerStatuses[1].State)
				}
			}},
		{"init container crash-looping: Init:CrashLoopBackOff", initAPIPod(corev1.RestartPolicyAlways, "init-a"),
			[]*kubecontainer.ContainerStatus{named("init-a", "i1", exited, 1)}, backoff, corev1.PodPending,
			"False ContainersNotInitialized containers with incomplete status: [init-a]", "False ContainersNotReady containers with unready status: [app]",
			func(t *testing.T, st corev1.PodStatus) {
				cs := st.InitContainerStatuses[0]
				if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.LastTerminationState.Terminated == nil {
					t.Errorf("init-a = %+v, want waiting CrashLoopBackOff with the exit as last state", cs)
				}
			}},
		{"init container failed with restartPolicy Never: Failed", initAPIPod(corev1.RestartPolicyNever, "init-a"),
			[]*kubecontainer.ContainerStatus{named("init-a", "i1", exited, 1)}, nil, corev1.PodFailed,
			"False ContainersNotInitialized containers with incomplete status: [init-a]", "False PodFailed ", nil},
		{"init done, app running: Running, Initialized, Ready", initAPIPod(corev1.RestartPolicyAlways, "init-a"),
			[]*kubecontainer.ContainerStatus{named("app", "a1", running, 0), named("init-a", "i1", exited, 0)}, nil, corev1.PodRunning,
			"True  ", "True  ", func(t *testing.T, st corev1.PodStatus) {
				if !st.InitContainerStatuses[0].Ready {
					t.Errorf("a succeeded init container is ready: %+v", st.InitContainerStatuses[0])
				}
			}},
		{"sidecar started, app running: both must be ready", initAPIPod(corev1.RestartPolicyAlways, "side-log"),
			[]*kubecontainer.ContainerStatus{named("app", "a1", running, 0), named("side-log", "s1", running, 0)}, nil, corev1.PodRunning,
			"True  ", "True  ", nil},
		{"app completed, sidecar still running: Running until the sidecar is stopped", initAPIPod(corev1.RestartPolicyNever, "side-log"),
			[]*kubecontainer.ContainerStatus{named("app", "a1", exited, 0), named("side-log", "s1", running, 0)}, nil, corev1.PodRunning,
			"True  ", "False ContainersNotReady containers with unready status: [app]", nil},
		{"app completed, sidecar stopped: Succeeded (the sidecar's exit does not count)", initAPIPod(corev1.RestartPolicyNever, "side-log"),
			[]*kubecontainer.ContainerStatus{named("app", "a1", exited, 0), named("side-log", "s1", exited, 137)}, nil, corev1.PodSucceeded,
			"True PodCompleted ", "False PodCompleted ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := &kubecontainer.PodStatus{Sandboxes: readySandboxes(), Containers: tc.containers}
			st := generateAPIPodStatus(tc.pod, rs, statusInputs{nodeIP: "127.0.0.1", runtimeName: "fake", reasons: tc.reasons, now: now})
			if st.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tc.wantPhase)
			}
			for typ, want := range map[corev1.PodConditionType]string{corev1.PodInitialized: tc.wantInit, corev1.PodReady: tc.wantReady} {
				c := condition(st, typ)
				if got := string(c.Status) + " " + c.Reason + " " + c.Message; got != want {
					t.Errorf("%s = %q, want %q", typ, got, want)
				}
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}
}

// A pod stopped while it was still initializing ends Failed, its started init containers
// terminated (upstream TerminatePod); one whose containers all exited 0 ends Succeeded.
func TestTerminalStatus(t *testing.T) {
	pod := initAPIPod(corev1.RestartPolicyAlways, "init-a", "init-b")
	rs := &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{named("init-a", "i1", runtimeapi.ContainerState_CONTAINER_RUNNING, 0)}}
	st := terminalStatus(pod, generateAPIPodStatus(pod, rs, statusInputs{nodeIP: "127.0.0.1", runtimeName: "fake", now: now}))
	if st.Phase != corev1.PodFailed {
		t.Errorf("phase = %s, want Failed", st.Phase)
	}
	if term := st.InitContainerStatuses[0].State.Terminated; term == nil || term.Reason != "ContainerStatusUnknown" || term.ExitCode != 137 {
		t.Errorf("init-a = %+v, want terminated ContainerStatusUnknown 137", st.InitContainerStatuses[0].State)
	}
	if st.InitContainerStatuses[1].State.Waiting == nil {
		t.Errorf("init-b never started, it stays waiting: %+v", st.InitContainerStatuses[1].State)
	}
	if c := condition(st, corev1.PodReady); c.Reason != "PodFailed" {
		t.Errorf("Ready = %+v, want reason PodFailed", c)
	}

	done := apiPod(corev1.RestartPolicyNever)
	rs = &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{inst("c1", runtimeapi.ContainerState_CONTAINER_EXITED, 0, 0)}}
	if st := terminalStatus(done, generateAPIPodStatus(done, rs, statusInputs{now: now})); st.Phase != corev1.PodSucceeded {
		t.Errorf("phase = %s, want Succeeded", st.Phase)
	}
}

// Upstream getPhase with ContainerRestartRules on (KEP-5307, its v1.36 default): a stopped
// container counts as "will restart" by its restart rules, its own restartPolicy, then the pod's —
// the runtime's decision (kubecontainer.ContainerShouldRestart).
func TestPodPhaseRestartRules(t *testing.T) {
	restartOn42 := []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
	exitedWith := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	spec := func(policy corev1.RestartPolicy, own *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: policy,
			Containers: []corev1.Container{{Name: "app", RestartPolicy: own, RestartPolicyRules: rules}}}}
	}
	initSpec := func(policy corev1.RestartPolicy, own *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule) *corev1.Pod {
		pod := spec(policy, nil, nil)
		pod.Spec.InitContainers = []corev1.Container{{Name: "init", RestartPolicy: own, RestartPolicyRules: rules}}
		return pod
	}
	never := ptr.To(corev1.ContainerRestartPolicyNever)
	tests := []struct {
		name string
		pod  *corev1.Pod
		st   corev1.PodStatus
		want corev1.PodPhase
	}{
		{"pod Never, exit 42 matches a Restart rule: Running (it restarts)", spec(corev1.RestartPolicyNever, never, restartOn42),
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{exitedWith("app", 42)}}, corev1.PodRunning},
		{"pod Never, exit 1 matches no rule: Failed", spec(corev1.RestartPolicyNever, never, restartOn42),
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{exitedWith("app", 1)}}, corev1.PodFailed},
		{"container Always under pod Never, exit 0: Running", spec(corev1.RestartPolicyNever, ptr.To(corev1.ContainerRestartPolicyAlways), nil),
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{exitedWith("app", 0)}}, corev1.PodRunning},
		{"container Never under pod Always, exit 1: Failed", spec(corev1.RestartPolicyAlways, never, nil),
			corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{exitedWith("app", 1)}}, corev1.PodFailed},
		{"init container failed under pod Never, a Restart rule matches: Pending", initSpec(corev1.RestartPolicyNever, never, restartOn42),
			corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{exitedWith("init", 42)}}, corev1.PodPending},
		{"init container Never under pod Always fails: Failed", initSpec(corev1.RestartPolicyAlways, never, nil),
			corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{exitedWith("init", 1)}}, corev1.PodFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := podPhase(tc.pod, &tc.st, false); got != tc.want {
				t.Errorf("podPhase = %s, want %s", got, tc.want)
			}
		})
	}
}

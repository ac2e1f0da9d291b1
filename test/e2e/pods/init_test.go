package pods

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// withInits adds init containers to spec: name=command pairs; a name starting "side" is a
// sidecar (restartPolicy: Always, KEP-753).
func withInits(spec corev1.PodSpec, inits ...[]string) corev1.PodSpec {
	for _, cmd := range inits {
		c := corev1.Container{Name: cmd[0], Image: "busybox:1.36", Command: cmd[1:]}
		if strings.HasPrefix(cmd[0], "side") {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		spec.InitContainers = append(spec.InitContainers, c)
	}
	return spec
}

// kubectlStatus is the STATUS column of `kubectl get pod`, which kubectl computes from the
// status the kubelet wrote (Init:0/1, Init:CrashLoopBackOff, PodInitializing, Running…).
func kubectlStatus(t *testing.T, ns, name string) string {
	t.Helper()
	out, err := cluster.KubectlOutput("get", "pod", "-n", ns, name, "--no-headers")
	if err != nil {
		return err.Error()
	}
	if f := strings.Fields(out); len(f) >= 3 {
		return f[2]
	}
	return out
}

func podCondition(pod *corev1.Pod, typ corev1.PodConditionType) corev1.PodCondition {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return corev1.PodCondition{}
}

// Init containers run one at a time, in order, each to completion, before the app starts; the
// pod shows Init:N/M while they run, then Initialized=True and Running.
func TestInitContainersRunInOrder(t *testing.T) {
	n := startNode(t, "e2e-init-order")
	ns := namespace(t)
	spec := withInits(podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"),
		[]string{"init-a", "sh", "-c", "sleep 2; exit 0"}, []string{"init-b", "sleep", "infinity"})
	createPod(t, ns, "ordered", spec)

	var pod *corev1.Pod
	framework.Eventually(t, time.Minute, "init-a Completed and init-b running", func() (bool, string) {
		pod = getPod(t, ns, "ordered")
		if len(pod.Status.InitContainerStatuses) != 2 {
			return false, describe(pod)
		}
		a, b := pod.Status.InitContainerStatuses[0], pod.Status.InitContainerStatuses[1]
		return a.State.Terminated != nil && a.State.Terminated.Reason == "Completed" && b.State.Running != nil, describe(pod)
	})
	if s := kubectlStatus(t, ns, "ordered"); s != "Init:1/2" {
		t.Errorf("kubectl STATUS = %q while the second of two init containers runs, want Init:1/2", s)
	}
	a, b := pod.Status.InitContainerStatuses[0], pod.Status.InitContainerStatuses[1]
	if b.State.Running.StartedAt.Before(&a.State.Terminated.FinishedAt) {
		t.Errorf("init-b started at %s, before init-a finished at %s", b.State.Running.StartedAt, a.State.Terminated.FinishedAt)
	}
	if w := pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Errorf("app = %+v, want waiting PodInitializing while init containers run", pod.Status.ContainerStatuses[0].State)
	}
	if c := podCondition(pod, corev1.PodInitialized); c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotInitialized" ||
		c.Message != "containers with incomplete status: [init-b]" {
		t.Errorf("Initialized = %+v", c)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending while initializing", pod.Status.Phase)
	}
	for _, c := range n.fakeState(t).Containers {
		if c.Name == "app" {
			t.Errorf("the app container exists before initialization finished: %+v", c)
		}
	}
}

// With restartPolicy Never, an init container that fails fails the pod; the app never starts.
func TestFailedInitContainerFailsNeverPod(t *testing.T) {
	n := startNode(t, "e2e-init-never")
	ns := namespace(t)
	createPod(t, ns, "doomed", withInits(podSpec(n.name, corev1.RestartPolicyNever, "sleep", "infinity"),
		[]string{"init-fail", "sh", "-c", "exit 1"}))
	framework.Eventually(t, time.Minute, "pod Failed", func() (bool, string) {
		p := getPod(t, ns, "doomed")
		return p.Status.Phase == corev1.PodFailed, string(p.Status.Phase)
	})
	pod := getPod(t, ns, "doomed")
	if term := pod.Status.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 1 || term.Reason != "Error" {
		t.Errorf("init-fail = %+v, want terminated Error exit 1", pod.Status.InitContainerStatuses[0].State)
	}
	if s := kubectlStatus(t, ns, "doomed"); s != "Init:Error" {
		t.Errorf("kubectl STATUS = %q, want Init:Error", s)
	}
	for _, c := range n.fakeState(t).Containers {
		if c.Name == "app" {
			t.Errorf("the app container was created: %+v", c)
		}
	}
}

// With restartPolicy Always, a failing init container is restarted with crash-loop back-off:
// Init:CrashLoopBackOff, a growing restart count, and the app still waits.
func TestInitContainerCrashLoop(t *testing.T) {
	n := startNode(t, "e2e-init-crash")
	ns := namespace(t)
	createPod(t, ns, "crashy", withInits(podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"),
		[]string{"init-fail", "sh", "-c", "exit 1"}))
	framework.Eventually(t, 2*time.Minute, "Init:CrashLoopBackOff", func() (bool, string) {
		s := kubectlStatus(t, ns, "crashy")
		return s == "Init:CrashLoopBackOff", s
	})
	pod := getPod(t, ns, "crashy")
	cs := pod.Status.InitContainerStatuses[0]
	if cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
		t.Errorf("init-fail = %+v, want restarted with the exit 1 as last state", cs)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", pod.Status.Phase)
	}
}

// A sidecar (restartable init container) starts before the app and runs beside it; when the app
// of a restartPolicy Never pod completes, the sidecar is stopped and the pod Succeeded.
func TestSidecarStopsWhenTheAppCompletes(t *testing.T) {
	n := startNode(t, "e2e-sidecar")
	ns := namespace(t)
	createPod(t, ns, "job", withInits(podSpec(n.name, corev1.RestartPolicyNever, "sh", "-c", "sleep 8; exit 0"),
		[]string{"side-log", "sleep", "infinity"}))
	framework.Eventually(t, time.Minute, "app and sidecar running", func() (bool, string) {
		p := getPod(t, ns, "job")
		if len(p.Status.InitContainerStatuses) == 0 || len(p.Status.ContainerStatuses) == 0 {
			return false, "no statuses yet"
		}
		side, app := p.Status.InitContainerStatuses[0], p.Status.ContainerStatuses[0]
		s := kubectlStatus(t, ns, "job") // kubectl's view of the same moment: Running
		return side.State.Running != nil && app.State.Running != nil && p.Status.Phase == corev1.PodRunning && s == "Running",
			string(p.Status.Phase) + " " + s
	})
	framework.Eventually(t, time.Minute, "pod Succeeded", func() (bool, string) {
		p := getPod(t, ns, "job")
		return p.Status.Phase == corev1.PodSucceeded, string(p.Status.Phase)
	})
	pod := getPod(t, ns, "job")
	if side := pod.Status.InitContainerStatuses[0]; side.State.Terminated == nil {
		t.Errorf("sidecar = %+v, want terminated once the app completed", side.State)
	}
	if app := pod.Status.ContainerStatuses[0]; app.State.Terminated == nil || app.State.Terminated.ExitCode != 0 {
		t.Errorf("app = %+v, want completed", app.State)
	}
	if c := podCondition(pod, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "PodCompleted" {
		t.Errorf("Ready = %+v, want False PodCompleted", c)
	}
}

package pods

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// execProbe is a probe running cmd in the container, every second.
func execProbe(failureThreshold int32, cmd ...string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}},
		PeriodSeconds: 1, FailureThreshold: failureThreshold, SuccessThreshold: 1, TimeoutSeconds: 1}
}

// A failing liveness probe kills the container, which restartPolicy Always restarts: the restart
// count grows, and the Events say why (Unhealthy, then Killing with upstream's message).
func TestLivenessProbeRestartsContainer(t *testing.T) {
	n := startNode(t, "e2e-probe-liveness")
	ns := namespace(t)
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Containers[0].LivenessProbe = execProbe(2, "sh", "-c", "echo sick; exit 1")
	createPod(t, ns, "sick", spec)
	framework.Eventually(t, 2*time.Minute, "restarted after its liveness probe failed", func() (bool, string) {
		p := getPod(t, ns, "sick")
		if len(p.Status.ContainerStatuses) == 0 {
			return false, "no status"
		}
		return p.Status.ContainerStatuses[0].RestartCount >= 1, string(p.Status.Phase)
	})
	events := cluster.Events(t, ns, "sick")
	for _, want := range []string{
		"kubelet Warning Unhealthy Liveness probe failed: sick",
		"kubelet Normal Killing Container app failed liveness probe, will be restarted",
		"kubelet Normal Started Container started",
	} {
		if !framework.HasEvent(events, want) {
			t.Errorf("no Event %q in %q", want, events)
		}
	}
}

// A failing readiness probe keeps the pod Running but not Ready, with upstream's reason and
// message; it never restarts the container. A passing one makes it Ready.
func TestReadinessProbe(t *testing.T) {
	n := startNode(t, "e2e-probe-readiness")
	ns := namespace(t)
	unready := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	unready.Containers[0].ReadinessProbe = execProbe(1, "sh", "-c", "exit 1")
	createPod(t, ns, "unready", unready)
	ready := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	ready.Containers[0].ReadinessProbe = execProbe(1, "sh", "-c", "exit 0")
	createPod(t, ns, "ready", ready)

	framework.Eventually(t, time.Minute, "ready pod Ready", func() (bool, string) {
		p := getPod(t, ns, "ready")
		return isReady(p), string(p.Status.Phase)
	})
	framework.Eventually(t, time.Minute, "unready pod Running with an Unhealthy event", func() (bool, string) {
		p := getPod(t, ns, "unready")
		return p.Status.Phase == corev1.PodRunning && framework.HasEvent(cluster.Events(t, ns, "unready"), "kubelet Warning Unhealthy Readiness probe failed"), string(p.Status.Phase)
	})
	p := getPod(t, ns, "unready")
	if c := podCondition(p, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady" || c.Message != "containers with unready status: [app]" {
		t.Errorf("Ready = %+v", c)
	}
	if cs := p.Status.ContainerStatuses[0]; cs.Ready || cs.RestartCount != 0 || cs.Started == nil || !*cs.Started {
		t.Errorf("app = %+v, want started, not ready, never restarted", cs)
	}
}

// A startup probe that never succeeds kills the container (upstream "failed startup probe");
// until it succeeds, liveness and readiness wait, and the container is not started.
func TestStartupProbeFailureKills(t *testing.T) {
	n := startNode(t, "e2e-probe-startup")
	ns := namespace(t)
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Containers[0].StartupProbe = execProbe(2, "sh", "-c", "exit 1")
	createPod(t, ns, "slow", spec)
	framework.Eventually(t, 2*time.Minute, "killed by its startup probe", func() (bool, string) {
		return framework.HasEvent(cluster.Events(t, ns, "slow"), "kubelet Normal Killing Container app failed startup probe, will be restarted"), ""
	})
	if cs := getPod(t, ns, "slow").Status.ContainerStatuses[0]; cs.Started != nil && *cs.Started {
		t.Errorf("app = %+v, want not started while its startup probe fails", cs)
	}
}

// activeDeadlineSeconds: a pod active longer than its deadline is Failed with reason
// DeadlineExceeded and upstream's message, its container stopped, and an Event says why.
func TestActiveDeadlineSeconds(t *testing.T) {
	n := startNode(t, "e2e-deadline")
	ns := namespace(t)
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.ActiveDeadlineSeconds = ptr.To[int64](3)
	createPod(t, ns, "bounded", spec)
	framework.Eventually(t, time.Minute, "Failed DeadlineExceeded", func() (bool, string) {
		p := getPod(t, ns, "bounded")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "DeadlineExceeded", string(p.Status.Phase) + " " + p.Status.Reason
	})
	framework.Eventually(t, time.Minute, "container stopped", func() (bool, string) {
		p := getPod(t, ns, "bounded")
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Terminated != nil, describe(p)
	})
	p := getPod(t, ns, "bounded")
	if p.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("message = %q", p.Status.Message)
	}
	if !framework.HasEvent(cluster.Events(t, ns, "bounded"), "kubelet Normal DeadlineExceeded Pod was active on the node longer than the specified deadline") {
		t.Errorf("no DeadlineExceeded Event in %q", cluster.Events(t, ns, "bounded"))
	}
}

package containerd

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// KEP-3386 on containerd 1.6, which has no CRI GetContainerEvents: with --feature-gates
// EventedPLEG=true the kubelet says once that it falls back to relisting (the runtime answers
// Unimplemented), and pods work as without the gate: a container stopped behind the kubelet's
// back (crictl stop) is seen by the relist and started again.
func TestEventedPLEGFallsBackOnContainerd16(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-evented", rt, "--feature-gates", "EventedPLEG=true")
	const fallback = "Container events stream is down; falling back to relisting"
	framework.Eventually(t, 30*time.Second, "the fallback in the log", func() (bool, string) {
		return strings.Contains(n.proc.Log(), fallback), "not yet"
	})
	for _, line := range strings.Split(n.proc.Log(), "\n") {
		if strings.Contains(line, fallback) {
			t.Logf("%s", line)
			if !strings.Contains(line, "Unimplemented") {
				t.Errorf("the fallback does not name containerd's answer (Unimplemented): %s", line)
			}
		}
	}

	ns := namespace(t)
	pod := runningPod(t, ns, "victim", busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600"))
	id := strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://")
	rt.crictl(t, "stop", "--timeout", "0", id)
	framework.Eventually(t, time.Minute, "the stopped container started again", func() (bool, string) {
		p := getPod(t, ns, "victim")
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil && cs.LastTerminationState.Terminated != nil, describe(p)
	})
	// The retries (every 1 s, doubling to 2 min) are at -v=4: the fallback is news once.
	if c := strings.Count(n.proc.Log(), fallback); c != 1 {
		t.Errorf("the log says %d times that PLEG falls back, want once", c)
	}
	waitNodeReady(t, n.name, corev1.ConditionTrue, "") // PLEG is healthy on its 1 s relist
}

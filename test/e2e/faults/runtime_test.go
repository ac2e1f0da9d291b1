package faults

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// runtimeOutage is how long the runtime stays dead.
const runtimeOutage = 30 * time.Second

// The container runtime dies (SIGKILL) under a running pod. The kubelet stays up and says so: the
// node goes Ready=False naming the runtime within about one status period (upstream:
// "container runtime is down"). The runtime comes back on the same socket but empty — its state
// was in memory, as a runtime that lost its containers — and the kubelet reconnects by itself and
// reconciles: the pod runs again in a new sandbox, and the node is Ready again.
func TestRuntimeRestart(t *testing.T) {
	n := startNode(t, "e2e-faults-runtime", "-v", "2")
	ns := namespace(t)
	ctx := context.Background()
	createPod(t, ns, boundPod("survivor", n.name))
	before := waitPodsRunning(t, ns, 1, time.Minute)[0]
	oldSandboxes := n.sandboxes(t)
	if len(oldSandboxes) != 1 {
		t.Fatalf("%d sandboxes before the runtime dies, want 1", len(oldSandboxes))
	}

	if err := n.runtime.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := n.runtime.Wait(30 * time.Second); err != nil {
		t.Fatalf("the killed runtime: %v", err)
	}
	killed := time.Now()
	// The status is computed every nodeStatusUpdateFrequency (10 s): one period, and a margin.
	framework.Eventually(t, 30*time.Second, "Ready=False naming the runtime", func() (bool, string) {
		status, msg := n.readyCondition()
		return status == corev1.ConditionFalse && strings.Contains(msg, "container runtime is down"), msg
	})
	t.Logf("Node Ready=False %s after the runtime died", time.Since(killed).Round(100*time.Millisecond))
	// Down for a while, as a runtime that crash-loops or is being upgraded: long enough for every
	// retry of the kubelet's CRI connection to have backed off.
	for time.Since(killed) < runtimeOutage {
		n.mustBeRunning(t)
		time.Sleep(5 * time.Second) // the outage itself: nothing to wait for
	}

	n.startRuntime(t) // the same socket; the stale socket file of the killed one is replaced
	restarted := time.Now()
	n.waitReady(t, corev1.ConditionTrue, time.Minute)
	t.Logf("Node Ready=True %s after the runtime came back", time.Since(restarted).Round(100*time.Millisecond))

	var after corev1.Pod
	framework.Eventually(t, 2*time.Minute, "the pod running again in a new container", func() (bool, string) {
		pod, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "survivor", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		after = *pod
		return runningAndReady(pod) && pod.Status.ContainerStatuses[0].ContainerID != before.Status.ContainerStatuses[0].ContainerID, describe(pod)
	})
	t.Logf("Pod running again %s after the runtime came back: %s", time.Since(restarted).Round(100*time.Millisecond), describe(&after))

	// Exactly one sandbox, new and ready, with one running container: nothing doubled.
	sandboxes := n.sandboxes(t)
	if len(sandboxes) != 1 || sandboxes[0].GetMetadata().GetUid() != string(before.UID) ||
		sandboxes[0].GetState() != runtimeapi.PodSandboxState_SANDBOX_READY || sandboxes[0].GetId() == oldSandboxes[0].GetId() {
		t.Errorf("after the runtime restart: sandboxes %v, want one new ready sandbox of pod %s", sandboxes, before.UID)
	}
	if st := n.fakeState(t); len(st.Containers) != 1 || st.Containers[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING.String() {
		t.Errorf("after the runtime restart the runtime holds %+v, want one running container", st.Containers)
	}
	n.mustBeRunning(t)
}

package faults

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// apiServerOutage is how long the API server stays down: longer than the Lease (40 s) and
// kcm's grace period (16 s here), so every client of the kubelet has given up and backed off.
const apiServerOutage = 60 * time.Second

// runtimeObjects is the runtime's state as comparable lines, "sandbox <id> <state>" and
// "container <id> attempt <n> <state>", sorted.
func runtimeObjects(st fakeruntime.State) []string {
	var out []string
	for _, s := range st.Sandboxes {
		out = append(out, fmt.Sprintf("sandbox %s %s", s.ID, s.State))
	}
	for _, c := range st.Containers {
		out = append(out, fmt.Sprintf("container %s attempt %d %s", c.ID, c.Attempt, c.State))
	}
	slices.Sort(out)
	return out
}

// The API server is stopped for a minute and started again with the same flags. The kubelet
// neither exits nor touches its pods meanwhile (upstream: the kubelet keeps running pods when it
// cannot reach the control plane), and once the API server is back its heartbeats resume by
// themselves: the Lease is renewed, the node status is reported (a Ready condition someone else
// overwrote is put back, as after kcm marks a silent node Unknown), new pods are started — all
// without a new CSR or any duplicated sandbox or container.
func TestAPIServerOutage(t *testing.T) {
	n := startNode(t, "e2e-faults-apiserver", "-v", "2")
	ns := namespace(t)
	ctx := context.Background()
	for i := range 3 {
		createPod(t, ns, boundPod(fmt.Sprintf("before-%d", i), n.name))
	}
	podsBefore := waitPodsRunning(t, ns, 3, 2*time.Minute)
	objectsBefore := runtimeObjects(n.fakeState(t))
	if got := csrCount(t, n.name); got != 1 {
		t.Fatalf("%d CSRs for %s before the outage, want 1", got, n.name)
	}
	pid := n.kubelet.Cmd.Process.Pid

	if err := cluster.StopComponent("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now() // the process is gone: nothing written after this came from before
	// Started again even if the test fails during the outage: other tests need the API server.
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := cluster.StartComponent("kube-apiserver"); err != nil {
				t.Errorf("restart the API server after a failed test: %v", err)
			}
		}
	})
	if _, err := cluster.Client.Discovery().ServerVersion(); err == nil {
		t.Fatal("the API server still answers after stop-component")
	}
	t.Logf("kube-apiserver stopped; waiting %s", apiServerOutage)
	// During the outage, every few seconds: the kubelet runs and its pods are exactly as they were.
	for time.Since(stoppedAt) < apiServerOutage {
		n.mustBeRunning(t)
		if got := runtimeObjects(n.fakeState(t)); !slices.Equal(got, objectsBefore) {
			t.Fatalf("the runtime changed while the API server was down:\nbefore %v\nnow    %v", objectsBefore, got)
		}
		time.Sleep(5 * time.Second) // the outage itself: nothing to wait for
	}

	if err := cluster.StartComponent("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	restarted = true
	back := time.Now()
	t.Logf("kube-apiserver is ready again after %s down", back.Sub(stoppedAt).Round(time.Second))
	// The rest of the control plane rode it out too (kube-controller-manager exits if the API
	// server goes away while it is still building its controllers, a second or two after it is
	// healthy; here it had long finished).
	if err := cluster.Status(); err != nil {
		t.Fatalf("the control plane after the outage: %v", err)
	}

	framework.Eventually(t, 30*time.Second, "the Lease renewed after the outage", func() (bool, string) {
		l, err := cluster.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return l.Spec.RenewTime.After(stoppedAt), "renewTime " + l.Spec.RenewTime.String()
	})
	t.Logf("Lease renewed %s after the API server was back", time.Since(back).Round(100*time.Millisecond))
	n.waitReady(t, corev1.ConditionTrue, 30*time.Second)

	// The node status loop runs again, its watch of the Node included: overwrite Ready as kcm
	// does for a silent node, and the kubelet reports Ready again (every 10 s it compares).
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown",`+
		`"message":"set by the e2e test, as kcm does","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	if _, err := cluster.Client.CoreV1().Nodes().Patch(ctx, n.name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	overwritten := time.Now()
	framework.Eventually(t, 30*time.Second, "the kubelet to report Ready=True over Unknown", func() (bool, string) {
		status, msg := n.readyCondition()
		return status == corev1.ConditionTrue, msg
	})
	t.Logf("Node status reported %s after Ready was overwritten", time.Since(overwritten).Round(100*time.Millisecond))

	// Its pod source watches again: a new pod starts. (Its reflector retries with client-go's
	// backoff, which after a minute of failures waits 30–60 s between attempts, as upstream's.)
	createPod(t, ns, boundPod("after", n.name))
	created := time.Now()
	waitPodsRunning(t, ns, 4, 2*time.Minute)
	t.Logf("A pod created after the outage ran %s later", time.Since(created).Round(100*time.Millisecond))

	n.mustBeRunning(t)
	if n.kubelet.Cmd.Process.Pid != pid {
		t.Errorf("the kubelet's pid changed from %d to %d", pid, n.kubelet.Cmd.Process.Pid)
	}
	// Nothing that ran before was restarted or duplicated: the old objects are all still there,
	// unchanged, and the only new ones are the new pod's sandbox and container.
	objectsAfter := runtimeObjects(n.fakeState(t))
	var added []string
	for _, o := range objectsAfter {
		if !slices.Contains(objectsBefore, o) {
			added = append(added, o)
		}
	}
	for _, o := range objectsBefore {
		if !slices.Contains(objectsAfter, o) {
			t.Errorf("%s is gone or changed after the outage", o)
		}
	}
	if len(added) != 2 {
		t.Errorf("after the outage the runtime has %d new objects, want the new pod's sandbox and container: %v", len(added), added)
	}
	for _, before := range podsBefore {
		after, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, before.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, a := before.Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]
		if a.ContainerID != b.ContainerID || a.RestartCount != 0 || a.State.Running == nil {
			t.Errorf("pod %s after the outage: %s; before: container %s", before.Name, describe(after), b.ContainerID)
		}
	}
	if got := csrCount(t, n.name); got != 1 {
		t.Errorf("%d CSRs for %s after the outage, want still 1", got, n.name)
	}
}

package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// podsToStart is how many pods the kubelet is starting when it is killed.
const podsToStart = 20

// countStates counts the runtime's containers by state, e.g. "CONTAINER_RUNNING".
func countStates(st fakeruntime.State) map[string]int {
	out := map[string]int{}
	for _, c := range st.Containers {
		out[c.State]++
	}
	return out
}

// The kubelet is SIGKILLed while it starts 20 pods — some running, some half started (created,
// not yet started: the runtime is slow), some not yet seen — and started again with the same root
// dir. The restarted kubelet adopts what its standalone runtime has (upstream: a restarted
// kubelet reads the runtime, it keeps no state of its own) and finishes the job: all 20 run, each
// in exactly one ready sandbox, nothing orphaned or doubled, and the client certificate is reused
// (no second CSR).
func TestKubeletKilledWhileStartingPods(t *testing.T) {
	n := startNode(t, "e2e-faults-kill", "-v", "2")
	ns := namespace(t)
	ctx := context.Background()
	admin := fakeruntime.NewAdminClient(n.socket + ".admin")
	// Every container takes 2 s to start, so at any moment several pods are half started.
	if err := admin.Inject(ctx, "latency", fakeruntime.FaultArgs{Method: "StartContainer", Duration: "2s"}); err != nil {
		t.Fatal(err)
	}
	// The pods arrive one by one, as from a ReplicaSet; creating them goes on while the kubelet is dead.
	created := make(chan error, 1)
	go func() {
		for i := range podsToStart {
			if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, boundPod(fmt.Sprintf("pod-%02d", i), n.name), metav1.CreateOptions{}); err != nil {
				created <- err
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		created <- nil
	}()
	framework.Eventually(t, 2*time.Minute, "a few pods running", func() (bool, string) {
		select {
		case err := <-created:
			if err != nil {
				t.Fatal(err)
			}
			created = nil // all created; a nil channel is never ready
		default:
		}
		states := countStates(n.fakeState(t))
		return states[runtimeapi.ContainerState_CONTAINER_RUNNING.String()] >= 3, fmt.Sprint(states)
	})
	if err := n.kubelet.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := n.kubelet.Wait(30 * time.Second); err != nil {
		t.Fatalf("the killed kubelet: %v", err)
	}
	atKill := n.fakeState(t)
	states := countStates(atKill)
	if states[runtimeapi.ContainerState_CONTAINER_RUNNING.String()] >= podsToStart {
		t.Fatalf("all %d pods were running when the kubelet was killed: nothing was interrupted (%v)", podsToStart, states)
	}
	t.Logf("Killed the kubelet with %d sandboxes and containers %v in the runtime", len(atKill.Sandboxes), states)
	if created != nil {
		if err := <-created; err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.Inject(ctx, "latency", fakeruntime.FaultArgs{Method: "StartContainer", Duration: "0s"}); err != nil {
		t.Fatal(err)
	}

	restarted := time.Now()
	n.kubelet = framework.StartProcess(t, minikubelet, n.args...)
	waitPodsRunning(t, ns, podsToStart, 3*time.Minute)
	t.Logf("All %d pods running %s after the restart", podsToStart, time.Since(restarted).Round(100*time.Millisecond))

	// Housekeeping has had its turns: every sandbox belongs to a live pod, each pod has exactly
	// one, ready, and exactly one container, running.
	framework.Eventually(t, time.Minute, "one ready sandbox and one running container per pod, nothing else", func() (bool, string) {
		return onePerPod(t, ns, n)
	})
	if got := csrCount(t, n.name); got != 1 {
		t.Errorf("%d CSRs for %s after the restart, want still 1", got, n.name)
	}
	n.mustBeRunning(t)
}

// onePerPod checks that the runtime holds exactly one ready sandbox and one running container
// for each pod of ns, and nothing else; it says what is wrong.
func onePerPod(t *testing.T, ns string, n *node) (bool, string) {
	t.Helper()
	list, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	live := map[string]string{} // UID → name
	for _, p := range list.Items {
		live[string(p.UID)] = p.Name
	}
	sandboxesOf := map[string][]string{} // UID → "id state"
	podOfSandbox := map[string]string{}
	var problems []string
	for _, s := range n.sandboxes(t) {
		uid := s.GetMetadata().GetUid()
		podOfSandbox[s.GetId()] = uid
		if _, ok := live[uid]; !ok {
			problems = append(problems, fmt.Sprintf("orphaned sandbox %.12s of %s/%s", s.GetId(), s.GetMetadata().GetNamespace(), s.GetMetadata().GetName()))
			continue
		}
		sandboxesOf[uid] = append(sandboxesOf[uid], fmt.Sprintf("%.12s %s", s.GetId(), s.GetState()))
	}
	containersOf := map[string][]string{}
	for _, c := range n.fakeState(t).Containers {
		uid := podOfSandbox[c.SandboxID]
		containersOf[uid] = append(containersOf[uid], fmt.Sprintf("%.12s attempt %d %s", c.ID, c.Attempt, c.State))
	}
	for uid, name := range live {
		if s := sandboxesOf[uid]; len(s) != 1 || !strings.HasSuffix(s[0], runtimeapi.PodSandboxState_SANDBOX_READY.String()) {
			problems = append(problems, fmt.Sprintf("%s has sandboxes %v", name, s))
		}
		if c := containersOf[uid]; len(c) != 1 || !strings.HasSuffix(c[0], runtimeapi.ContainerState_CONTAINER_RUNNING.String()) {
			problems = append(problems, fmt.Sprintf("%s has containers %v", name, c))
		}
	}
	sort.Strings(problems)
	return len(problems) == 0 && len(live) == podsToStart, fmt.Sprintf("%d pods; %s", len(live), strings.Join(problems, "; "))
}

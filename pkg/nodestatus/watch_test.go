package nodestatus

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

// gets counts the GETs of Nodes the manager sent (the informer LISTs and WATCHes instead).
func gets(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "nodes" {
			n++
		}
	}
	return n
}

// startWatch runs the manager's node informer (as Run does) until the test ends, and waits until
// the status loop may read from it.
func startWatch(ctx context.Context, t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { m.watch.run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	waitFor(ctx, t, "the node watch to sync", func() bool { _, ok := m.watch.cached(); return ok })
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Upstream tryUpdateNodeStatus reads its first try from the node lister: an idle node whose
// status does not change sends no request at all between reports (KEP-589: the Lease is the
// heartbeat), not even a GET.
func TestIdleTurnsReadTheWatchCache(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, clk, _ := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	startWatch(ctx, t, m)
	client.ClearActions()
	for range 6 { // a minute
		clk.Step(10 * time.Second)
		if err := m.syncOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if g, p := gets(client), patches(client); g != 0 || p != 0 {
		t.Errorf("an idle minute: %d GETs and %d PATCHes, want none", g, p)
	}
}

// What another writer changes reaches the loop through the watch: kcm's Ready=Unknown is put
// back to True at the next turn, without a GET.
func TestWatchBringsOthersChanges(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, clk, _ := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	startWatch(ctx, t, m)
	markUnknown(ctx, t, client)
	waitFor(ctx, t, "the watch to bring Ready=Unknown", func() bool {
		node, ok := m.watch.cached()
		return ok && readyStatus(node.Status) == corev1.ConditionUnknown
	})
	client.ClearActions()
	clk.Step(10 * time.Second)
	if err := m.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if g, p := gets(client), patches(client); g != 0 || p != 1 {
		t.Errorf("Ready overwritten with Unknown: %d GETs and %d PATCHes, want 0 and 1", g, p)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if got := readyStatus(node.Status); got != corev1.ConditionTrue {
		t.Errorf("Ready = %s after the sync, want True", got)
	}
}

// After a failed PATCH the next turn reads the Node from the API server, as upstream's retries
// do; once a turn succeeds the loop reads the watch cache again.
func TestFailedTurnMakesTheNextOneGet(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, clk, _ := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	startWatch(ctx, t, m)
	failures := 1
	client.PrependReactor("patch", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failures > 0 {
			failures--
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	m.AddReadinessCheck(ReadinessCheck{Name: "PLEG", Check: func() error { return errors.New("pleg was last seen active 4m ago") }})
	client.ClearActions()
	want := []struct{ gets, patches int }{
		{0, 1}, // Ready flips: PATCH, refused
		{1, 1}, // the retry GETs, then PATCHes
		{0, 0}, // back on the watch cache; nothing changed
	}
	for i, w := range want {
		clk.Step(10 * time.Second)
		err := m.syncOnce(ctx)
		if (err != nil) != (i == 0) {
			t.Fatalf("turn %d: err = %v", i, err)
		}
		if g, p := gets(client), patches(client); g != w.gets || p != w.patches {
			t.Errorf("turn %d: %d GETs and %d PATCHes, want %d and %d", i, g, p, w.gets, w.patches)
		}
		client.ClearActions()
		if i == 1 { // the patched Node must be in the cache before the next turn compares with it
			waitFor(ctx, t, "the watch to bring Ready=False", func() bool {
				node, ok := m.watch.cached()
				return ok && readyStatus(node.Status) == corev1.ConditionFalse
			})
		}
	}
}

// While no watch is open (the API server went away and the reflector backs off), the cache may
// miss what kcm wrote meanwhile, so each turn GETs the Node: kcm's Unknown is corrected at the
// next turn, not when the watch comes back up to 30 s later.
func TestBrokenWatchMakesTurnsGet(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, clk, _ := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	first := watch.NewFake()
	var mu sync.Mutex
	opened := 0
	client.PrependWatchReactor("nodes", func(clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if opened++; opened == 1 {
			return true, first, nil
		}
		return true, nil, errors.New("connection refused") // the API server is away
	})
	startWatch(ctx, t, m)
	first.Stop() // the connection breaks
	waitFor(ctx, t, "the informer to notice the broken watch", func() bool { _, ok := m.watch.cached(); return !ok })
	markUnknown(ctx, t, client) // kcm, meanwhile
	client.ClearActions()
	clk.Step(10 * time.Second)
	if err := m.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if g, p := gets(client), patches(client); g != 1 || p != 1 {
		t.Errorf("no watch open: %d GETs and %d PATCHes, want 1 and 1", g, p)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if got := readyStatus(node.Status); got != corev1.ConditionTrue {
		t.Errorf("Ready = %s after the sync, want True", got)
	}
}

// markUnknown does what kube-controller-manager does to a node whose Lease went stale.
func markUnknown(ctx context.Context, t *testing.T, client *fake.Clientset) {
	t.Helper()
	node, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := findCondition(node.Status, corev1.NodeReady)
	ready.Status, ready.Reason, ready.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

package lease

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Upstream pins: renew interval defaults to a quarter of the lease duration (KEP-589), and a
// failed renewal is retried after 200 ms, doubling, capped at 7 s.
func TestNextDelay(t *testing.T) {
	tests := []struct {
		name        string
		prevBackoff time.Duration
		failed      bool
		jitter      float64
		wantDelay   time.Duration
		wantBackoff time.Duration
	}{
		{"success, no jitter", 0, false, 0, 10 * time.Second, 0},
		{"success, full jitter adds 4%", 0, false, 1, 10*time.Second + 400*time.Millisecond, 0},
		{"success resets backoff", 7 * time.Second, false, 0, 10 * time.Second, 0},
		{"first failure", 0, true, 0, 200 * time.Millisecond, 200 * time.Millisecond},
		{"second failure doubles", 200 * time.Millisecond, true, 0, 400 * time.Millisecond, 400 * time.Millisecond},
		{"capped at 7s", 6400 * time.Millisecond, true, 0, 7 * time.Second, 7 * time.Second},
		{"stays capped", 7 * time.Second, true, 0.5, 7 * time.Second, 7 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			delay, backoff := nextDelay(10*time.Second, tc.prevBackoff, tc.failed, tc.jitter)
			if delay != tc.wantDelay || backoff != tc.wantBackoff {
				t.Errorf("nextDelay = (%s, %s), want (%s, %s)", delay, backoff, tc.wantDelay, tc.wantBackoff)
			}
		})
	}
}

func TestNewDefaultsAndValidation(t *testing.T) {
	c, err := New(Config{Client: fake.NewClientset(), NodeName: "n1", Duration: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.RenewInterval != 10*time.Second {
		t.Errorf("renew interval = %s, want duration/4 = 10s", c.cfg.RenewInterval)
	}
	if _, err := New(Config{Client: fake.NewClientset(), NodeName: "n1", Duration: 10 * time.Second, RenewInterval: 10 * time.Second}); err == nil {
		t.Error("a renew interval as long as the lease was accepted")
	}
	if _, err := New(Config{NodeName: "n1"}); err == nil {
		t.Error("a config without a client was accepted")
	}
}

// syncOnce creates the Lease with holder, duration and an owner reference to the Node, then
// renews it with one UPDATE per heartbeat (no GET), and re-reads it after a failed update.
func TestSyncOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
	client := fake.NewClientset(node)
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	c, err := New(Config{Client: client, NodeName: "n1", Duration: 40 * time.Second, Clock: clk, Jitter: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	lease, err := client.CoordinationV1().Leases(Namespace).Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *lease.Spec.HolderIdentity != "n1" || *lease.Spec.LeaseDurationSeconds != 40 || !lease.Spec.RenewTime.Time.Equal(clk.Now()) {
		t.Errorf("lease spec = %+v", lease.Spec)
	}
	if len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != "node-uid" || lease.OwnerReferences[0].Kind != "Node" {
		t.Errorf("owner references = %+v, want the Node", lease.OwnerReferences)
	}

	client.ClearActions()
	clk.Step(10 * time.Second)
	if err := c.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if verbs := actionVerbs(client.Actions()); len(verbs) != 1 || verbs[0] != "update leases" {
		t.Errorf("a renewal made %v, want exactly one lease update", verbs)
	}
	lease, _ = client.CoordinationV1().Leases(Namespace).Get(ctx, "n1", metav1.GetOptions{})
	if !lease.Spec.RenewTime.Time.Equal(clk.Now()) {
		t.Errorf("renewTime = %s, want %s", lease.Spec.RenewTime, clk.Now())
	}

	// A failed update drops the cached Lease: the next turn GETs it again.
	client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("apiserver is down")
	})
	if err := c.syncOnce(ctx); err == nil {
		t.Fatal("a failed update was not reported")
	}
	client.ReactionChain = client.ReactionChain[1:]
	client.ClearActions()
	if err := c.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if verbs := actionVerbs(client.Actions()); len(verbs) != 2 || verbs[0] != "get leases" || verbs[1] != "update leases" {
		t.Errorf("after a failure the heartbeat made %v, want get then update", verbs)
	}
}

// Someone else renewed the Lease (the lease keeper during a breakpoint): the next renewal gets a
// conflict, reads the Lease again and succeeds in the same turn, with no error to log.
func TestSyncOnceRetriesAConflictAtOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}})
	c, err := New(Config{Client: client, NodeName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	conflicts := 1
	client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), "n1", errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	client.ClearActions()
	if err := c.syncOnce(ctx); err != nil {
		t.Fatalf("a conflict was reported as a failed renewal: %v", err)
	}
	if verbs := actionVerbs(client.Actions()); len(verbs) != 3 || verbs[1] != "get leases" || verbs[2] != "update leases" {
		t.Errorf("after a conflict the heartbeat made %v, want update, get, update", verbs)
	}
}

// Run renews on the renew interval and backs off on failure, measured on a fake clock.
func TestRunRenewsOnInterval(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	renewed := make(chan error, 10)
	c, err := New(Config{Client: client, NodeName: "n1", Duration: 40 * time.Second, Clock: clk,
		Jitter: func() float64 { return 0 }, OnRenew: func(_ time.Duration, err error) { renewed <- err }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()

	if err := <-renewed; err != nil { // the first heartbeat is immediate
		t.Fatal(err)
	}
	var fail atomic.Bool
	fail.Store(true)
	client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		if fail.Load() {
			return true, nil, errors.New("apiserver is down")
		}
		return false, nil, nil
	})
	// Nothing happens before the renew interval has passed.
	waitForWaiter(t, clk)
	clk.Step(9 * time.Second)
	select {
	case err := <-renewed:
		t.Fatalf("renewed after 9s (err %v), want 10s", err)
	default:
	}
	clk.Step(time.Second)
	if err := <-renewed; err == nil {
		t.Fatal("expected the injected failure")
	}
	// The retry comes after 200 ms, not after the full interval.
	waitForWaiter(t, clk)
	fail.Store(false)
	clk.Step(200 * time.Millisecond)
	if err := <-renewed; err != nil {
		t.Fatalf("retry after 200ms failed: %v", err)
	}
	cancel()
	<-done
}

func waitForWaiter(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the lease loop never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

func actionVerbs(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		if a.GetResource().Resource == "nodes" {
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return out
}

// Every renewal attempt lands in the journal as lease/renew with its latency, and a failed one
// with its error.
func TestSyncOnceRecordsRenewalsInTheJournal(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	j := journal.NewWithClock(8, clock.RealClock{})
	c, err := New(Config{Client: client, NodeName: "n1", Clock: testingclock.NewFakeClock(time.Now()), Journal: j.For(journal.SourceLease)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("apiserver is down")
	})
	if err := c.syncOnce(ctx); err == nil {
		t.Fatal("a failed update was not reported")
	}
	events := j.Read(0, journal.Filter{}).Events
	if len(events) != 2 {
		t.Fatalf("journal %+v, want two renewals", events)
	}
	for i, e := range events {
		if e.Source != journal.SourceLease || e.Kind != "renew" || e.Pod != "" || e.Fields["latency"] != "0s" {
			t.Errorf("event %d = %+v, want lease/renew with latency 0s (fake clock)", i, e)
		}
	}
	if _, ok := events[0].Fields["error"]; ok {
		t.Errorf("successful renewal carries an error: %v", events[0].Fields)
	}
	if got := events[1].Fields["error"]; !strings.Contains(got, "apiserver is down") {
		t.Errorf("failed renewal error = %q, want the API error", got)
	}
}

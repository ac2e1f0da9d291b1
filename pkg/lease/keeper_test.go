package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"
)

func TestParseProcState(t *testing.T) {
	for _, tc := range []struct {
		stat string
		want byte
	}{
		{"1234 (minikubelet) S 1 1234 1234 0", 'S'},
		{"1234 (dlv) t 1 2 3", 't'},
		{"1234 (a) b) (c) T 1 2 3", 'T'}, // a command name may hold ") "
	} {
		got, err := parseProcState(tc.stat)
		if err != nil || got != tc.want {
			t.Errorf("parseProcState(%q) = %q, %v; want %q", tc.stat, got, err, tc.want)
		}
	}
	if _, err := parseProcState("garbage"); err == nil {
		t.Error("parseProcState(garbage) succeeded")
	}
}

// keeperHarness runs RunKeeper on a fake clock and drives it one turn at a time: the keeper's
// ProcState takes the parent's state from the test, so the test knows where the loop is without
// sleeping.
type keeperHarness struct {
	t      *testing.T
	clock  *testingclock.FakeClock
	client *fake.Clientset
	poll   time.Duration
	states chan byte // one state per turn; closed: the parent exited
	done   chan error
}

func startKeeper(t *testing.T, client *fake.Clientset, duration time.Duration) *keeperHarness {
	t.Helper()
	h := &keeperHarness{t: t, clock: testingclock.NewFakeClock(time.Now()), client: client, poll: time.Second,
		states: make(chan byte), done: make(chan error, 1)}
	go func() {
		h.done <- RunKeeper(context.Background(), KeeperConfig{
			Client: client, NodeName: "n1", ParentPID: 42, Duration: duration, Poll: h.poll, Clock: h.clock,
			ProcState: func(pid int) (byte, error) {
				if pid != 42 {
					t.Errorf("keeper looked at pid %d, want 42", pid)
				}
				state, ok := <-h.states
				if !ok {
					return 0, errors.New("no such process")
				}
				return state, nil
			},
		})
	}()
	h.states <- 'S' // the first turn runs at once, before any tick
	return h
}

// turn lets one Poll pass and runs the next turn with the parent in state. When it returns,
// the keeper has finished the turn before: it only looks at the parent again after that turn.
func (h *keeperHarness) turn(state byte) {
	h.clock.Step(h.poll)
	h.states <- state
}

// stop ends the keeper as the parent's exit does, and checks that it returns nil.
func (h *keeperHarness) stop() {
	h.clock.Step(h.poll)
	close(h.states)
	if err := <-h.done; err != nil {
		h.t.Errorf("RunKeeper = %v after the kubelet exited, want nil", err)
	}
}

func (h *keeperHarness) updates() int {
	n := 0
	for _, a := range h.client.Actions() {
		if a.GetVerb() == "update" {
			n++
		}
	}
	return n
}

// The keeper is silent while the kubelet runs, renews every Duration/4 (as the Lease controller
// would) while it is stopped, falls silent again when it runs, and ends when it exits.
func TestKeeperRenewsOnlyWhileParentStopped(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	client := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: Namespace},
		Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: old}},
	})
	h := startKeeper(t, client, 8*time.Second) // renew every 2 s: every second poll

	for range 3 {
		h.turn('S')
	}
	if n := len(client.Actions()); n != 0 {
		t.Fatalf("keeper sent %d requests while the kubelet was running, want 0", n)
	}

	stoppedAt := h.clock.Now().Add(h.poll)
	h.turn('t') // a breakpoint: renew at once
	for range 4 {
		h.turn('t') // 1 s, 2 s (renew), 3 s, 4 s (renew) after the first renewal
	}
	h.turn('t') // the turn before has finished
	if n := h.updates(); n != 3 {
		t.Fatalf("keeper renewed %d times in 4 s of the kubelet stopped, want 3 (at once, then every Duration/4)", n)
	}
	l, err := client.CoordinationV1().Leases(Namespace).Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := stoppedAt.Add(4 * time.Second); !l.Spec.RenewTime.Time.Equal(want) {
		t.Errorf("renewTime = %v, want %v (the clock's time at the last renewal)", l.Spec.RenewTime, want)
	}

	h.turn('R') // continue
	before := len(client.Actions())
	for range 8 {
		h.turn('R')
	}
	if after := len(client.Actions()); after != before {
		t.Errorf("keeper sent %d requests after the kubelet ran again, want 0", after-before)
	}
	h.stop()
}

// A kubelet stopped before it created its Lease still stays Ready: the keeper creates the Lease.
func TestKeeperCreatesMissingLease(t *testing.T) {
	client := fake.NewClientset()
	h := startKeeper(t, client, 40*time.Second)
	h.turn('T')
	h.turn('T') // the turn before has finished
	l, err := client.CoordinationV1().Leases(Namespace).Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the keeper did not create the missing lease: %v", err)
	}
	if *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != 40 || l.Spec.RenewTime == nil {
		t.Fatalf("created lease %+v", l.Spec)
	}
	h.stop()
}

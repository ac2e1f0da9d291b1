package lease

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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

// The keeper is silent while the kubelet runs, renews while it is stopped, and ends when it exits.
func TestKeeperRenewsOnlyWhileParentStopped(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	client := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: Namespace},
		Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: old}},
	})
	var mu sync.Mutex
	state := byte('S')
	gone := false
	setState := func(s byte, exited bool) { mu.Lock(); state, gone = s, exited; mu.Unlock() }
	updates := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "update" {
				n++
			}
		}
		return n
	}
	done := make(chan error, 1)
	go func() {
		done <- RunKeeper(context.Background(), KeeperConfig{
			Client: client, NodeName: "n1", ParentPID: 42, Duration: 80 * time.Millisecond, Poll: 5 * time.Millisecond,
			ProcState: func(pid int) (byte, error) {
				mu.Lock()
				defer mu.Unlock()
				if pid != 42 {
					t.Errorf("keeper looked at pid %d, want 42", pid)
				}
				if gone {
					return 0, errors.New("no such process")
				}
				return state, nil
			},
		})
	}()

	time.Sleep(100 * time.Millisecond)
	if n := len(client.Actions()); n != 0 {
		t.Fatalf("keeper sent %d requests while the kubelet was running, want 0", n)
	}

	setState('t', false) // a breakpoint
	deadline := time.Now().Add(5 * time.Second)
	for updates() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := updates(); n < 3 {
		t.Fatalf("keeper renewed %d times while the kubelet was stopped, want at least 3", n)
	}
	l, err := client.CoordinationV1().Leases(Namespace).Get(context.Background(), "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Spec.RenewTime.After(old.Add(time.Minute)) {
		t.Errorf("renewTime %v was not moved forward", l.Spec.RenewTime)
	}

	setState('R', false) // continue
	time.Sleep(20 * time.Millisecond)
	before := len(client.Actions())
	time.Sleep(100 * time.Millisecond)
	if after := len(client.Actions()); after != before {
		t.Errorf("keeper sent %d requests after the kubelet ran again, want 0", after-before)
	}

	setState('S', true)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunKeeper = %v after the kubelet exited, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("keeper did not stop after the kubelet exited")
	}
}

// A kubelet stopped before it created its Lease still stays Ready: the keeper creates the Lease.
func TestKeeperCreatesMissingLease(t *testing.T) {
	client := fake.NewClientset()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = RunKeeper(ctx, KeeperConfig{
			Client: client, NodeName: "n1", ParentPID: 42, Duration: 40 * time.Second, Poll: 5 * time.Millisecond,
			ProcState: func(int) (byte, error) { return 'T', nil },
		})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l, err := client.CoordinationV1().Leases(Namespace).Get(context.Background(), "n1", metav1.GetOptions{})
		if err == nil {
			if *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != 40 || l.Spec.RenewTime == nil {
				t.Fatalf("created lease %+v", l.Spec)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the keeper did not create the missing lease")
}

package main

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Lab 03: the Lease is fresh within its own duration; the heartbeat within the report frequency.
func TestLeaseAndHeartbeat(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(age time.Duration, seconds int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: coordinationv1.LeaseSpec{
			RenewTime: &metav1.MicroTime{Time: now.Add(-age)}, LeaseDurationSeconds: ptr.To(seconds), HolderIdentity: ptr.To("n")}}
	}
	if r := leaseFresh(lease(5*time.Second, 40), now); !r.ok {
		t.Errorf("5 s old, 40 s lease: %s", r)
	}
	if r := leaseFresh(lease(15*time.Second, 12), now); r.ok || !strings.Contains(r.fix, "kill -CONT") {
		t.Errorf("15 s old, 12 s lease: %s", r)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(now.Add(-10 * time.Minute))}}}}
	if r := readyHeartbeat(node, now); r.ok {
		t.Errorf("10 min old heartbeat passed: %s", r)
	}
	node.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(now.Add(-time.Minute))
	if r := readyHeartbeat(node, now); !r.ok {
		t.Errorf("1 min old heartbeat: %s", r)
	}
	l := lease(0, 40)
	if r := leaseHeld(l, node); r.ok || !strings.Contains(r.what, "no owner reference") {
		t.Errorf("lease without owner: %s", r)
	}
	l.OwnerReferences = []metav1.OwnerReference{{Kind: "Node", Name: "n", UID: "u1"}}
	if r := leaseHeld(l, node); !r.ok {
		t.Errorf("owned lease: %s", r)
	}
}

// Lab 03: NodeNotReady must be followed by NodeReady; the order is by time, not by list order.
// A node that was never frozen (exercise 4 skipped) has only its first NodeReady: missing.
func TestNotReadyRoundTrip(t *testing.T) {
	at := func(reason string, min int) corev1.Event {
		return corev1.Event{Reason: reason, LastTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 12, min, 0, 0, time.UTC))}
	}
	tests := []struct {
		name   string
		events []corev1.Event
		ok     bool
	}{
		{"exercise 4 skipped: only the first NodeReady", []corev1.Event{at("NodeReady", 1)}, false},
		{"NotReady, not back", []corev1.Event{at("NodeReady", 1), at("NodeNotReady", 2)}, false},
		{"round trip, listed out of order", []corev1.Event{at("NodeReady", 3), at("NodeNotReady", 2), at("Starting", 1)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := notReadyRoundTrip(tc.events); r.ok != tc.ok {
				t.Errorf("got %s, want ok=%v", r, tc.ok)
			}
			if r := notReadyRoundTrip(tc.events); len(tc.events) == 1 && !strings.Contains(r.fix, "do exercise 4") {
				t.Errorf("exercise 4 skipped, and the fix does not say to do it: %s", r)
			}
		})
	}
}

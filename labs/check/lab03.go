package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lab 03, node registration and the Lease: the Node as minikubelet registered it, its Lease held,
// owned and renewed, the Ready heartbeat, and the NotReady → Ready round trip of the exercise.

// maxHeartbeatAge is how old the Ready condition's heartbeat may be: the status is reported every
// nodeStatusReportFrequency (5 min) when nothing changes, checked every 10 s.
const maxHeartbeatAge = 5*time.Minute + 30*time.Second

func lab03() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: "the Node as registered", run: func(ctx context.Context, e *env) result {
			node, err := e.node(ctx)
			if err != nil {
				return missing("node: "+err.Error(), "see the error")
			}
			return registeredNode(node)
		}},
		{name: "the Ready heartbeat", run: func(ctx context.Context, e *env) result {
			node, err := e.node(ctx)
			if err != nil {
				return missing("node: "+err.Error(), "see the error")
			}
			return readyHeartbeat(node, time.Now())
		}},
		{name: "the Lease is held by the node", run: func(ctx context.Context, e *env) result {
			lease, node, r := leaseAndNode(ctx, e)
			if !r.ok {
				return r
			}
			return leaseHeld(lease, node)
		}},
		{name: "the Lease is fresh", needs: []string{"the Lease is held by the node"}, run: func(ctx context.Context, e *env) result {
			lease, _, r := leaseAndNode(ctx, e)
			if !r.ok {
				return r
			}
			return leaseFresh(lease, time.Now())
		}},
		{name: "the Lease is renewed while we watch", needs: []string{"the Lease is held by the node"}, run: watchRenewal},
		{name: "the node went NotReady and came back", run: func(ctx context.Context, e *env) result {
			events, err := e.client.CoreV1().Events("").List(ctx, metav1.ListOptions{
				FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + e.cfg.nodeName,
			})
			if err != nil {
				return missing("events of node "+e.cfg.nodeName+": "+err.Error(), "see the error")
			}
			return notReadyRoundTrip(events.Items)
		}},
	}
}

func leaseAndNode(ctx context.Context, e *env) (*coordinationv1.Lease, *corev1.Node, result) {
	lease, err := e.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, e.cfg.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, missing("there is no Lease "+corev1.NamespaceNodeLease+"/"+e.cfg.nodeName, "minikubelet creates it right after registering the node: is it running?")
	}
	if err != nil {
		return nil, nil, missing("Lease: "+err.Error(), "see the error")
	}
	node, err := e.node(ctx)
	if err != nil {
		return nil, nil, missing("node: "+err.Error(), "see the error")
	}
	return lease, node, result{ok: true}
}

// registeredNode: the labels, address and kubelet endpoint minikubelet registers the Node with. Pure.
func registeredNode(node *corev1.Node) result {
	if node.Labels[corev1.LabelHostname] != node.Name || node.Labels[corev1.LabelOSStable] == "" {
		return missing(fmt.Sprintf("node %s lacks the labels %s=%s and %s", node.Name, corev1.LabelHostname, node.Name, corev1.LabelOSStable),
			"minikubelet sets them when it registers and reconciles them at start: restart it")
	}
	ip := ""
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip = a.Address
		}
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if ip == "" || port == 0 {
		return missing("node "+node.Name+" reports no InternalIP or kubelet port", "the first status report sets them: wait 10 s and run the check again")
	}
	return passed("node %s registered: %s=%s, InternalIP %s, kubelet API on port %d, runtime %s",
		node.Name, corev1.LabelHostname, node.Name, ip, port, node.Status.NodeInfo.ContainerRuntimeVersion)
}

// readyHeartbeat: Ready=True with a recent lastHeartbeatTime. Pure.
func readyHeartbeat(node *corev1.Node, now time.Time) result {
	c := nodeCondition(node, corev1.NodeReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return missing("node "+node.Name+" is not Ready", "see the line about the node above")
	}
	age := now.Sub(c.LastHeartbeatTime.Time)
	if age > maxHeartbeatAge {
		return missing(fmt.Sprintf("the Ready condition's last heartbeat was %s ago", age.Round(time.Second)),
			"minikubelet reports its status at least every 5 min: is its node status loop stuck? Look for 'Unable to update the node status' in its log")
	}
	return passed("Ready=True, last heartbeat %s ago (reported on change, at least every 5 min), last transition %s",
		age.Round(time.Second), c.LastTransitionTime.UTC().Format(time.RFC3339))
}

// leaseHeld: the node holds its Lease and the Node owns it (so it is deleted with the Node). Pure.
func leaseHeld(lease *coordinationv1.Lease, node *corev1.Node) result {
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	if holder != node.Name {
		return missing(fmt.Sprintf("Lease %s/%s is held by %q, not %q", lease.Namespace, lease.Name, holder, node.Name),
			"only the node's kubelet should write its Lease: is another process renewing it?")
	}
	for _, o := range lease.OwnerReferences {
		if o.Kind == "Node" && o.Name == node.Name && o.UID == node.UID {
			return passed("Lease %s/%s: holder %s, owned by Node %s (uid %s)", lease.Namespace, lease.Name, holder, node.Name, node.UID)
		}
	}
	return missing(fmt.Sprintf("Lease %s/%s has no owner reference to Node %s (uid %s)", lease.Namespace, lease.Name, node.Name, node.UID),
		"minikubelet adds it at the next renewal once the Node exists; if the Node was deleted and re-created, delete the Lease: kubectl -n kube-node-lease delete lease "+node.Name)
}

// leaseFresh: renewTime is within the Lease's duration. Pure.
func leaseFresh(lease *coordinationv1.Lease, now time.Time) result {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return missing("Lease "+lease.Name+" has no renewTime or leaseDurationSeconds", "is minikubelet renewing it? Its log says 'Failed to renew the node lease' if not")
	}
	duration := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	age := now.Sub(lease.Spec.RenewTime.Time)
	if age > duration {
		return missing(fmt.Sprintf("the Lease was last renewed %s ago, longer than its %s", age.Round(100*time.Millisecond), duration),
			"is minikubelet running and not stopped (SIGSTOP, a breakpoint)? `kill -CONT <pid>` resumes a stopped one")
	}
	return passed("renewed %s ago, within its leaseDurationSeconds %d", age.Round(100*time.Millisecond), *lease.Spec.LeaseDurationSeconds)
}

// watchRenewal polls the Lease until renewTime moves, for a little more than a renew interval
// (duration/4, at most 20 s in all), and reports the interval it saw.
func watchRenewal(ctx context.Context, e *env) result {
	get := func() (*coordinationv1.Lease, error) {
		return e.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, e.cfg.nodeName, metav1.GetOptions{})
	}
	first, err := get()
	if err != nil || first.Spec.RenewTime == nil || first.Spec.LeaseDurationSeconds == nil {
		return missing("the Lease cannot be read or has no renewTime", "see the lines above")
	}
	interval := time.Duration(*first.Spec.LeaseDurationSeconds) * time.Second / 4
	wait := min(interval+interval/2+2*time.Second, 20*time.Second)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return missing("stopped watching the Lease: "+ctx.Err().Error(), "run the check again")
		case <-time.After(500 * time.Millisecond):
		}
		lease, err := get()
		if err != nil {
			continue
		}
		if lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(first.Spec.RenewTime.Time) {
			step := lease.Spec.RenewTime.Sub(first.Spec.RenewTime.Time)
			return passed("renewTime moved %s later while we watched (minikubelet renews every leaseDurationSeconds/4 = %s)",
				step.Round(100*time.Millisecond), interval)
		}
	}
	return missing(fmt.Sprintf("renewTime did not move in %s (it should every %s)", wait.Round(time.Second), interval),
		"is minikubelet stopped? `kill -CONT <pid>` resumes it; its log at -v=4 shows 'Renewed the node lease'")
}

// notReadyRoundTrip: a NodeNotReady event (kube-controller-manager saw no renewal for its grace
// period) followed by a NodeReady (minikubelet, back, reported Ready again). Pure.
func notReadyRoundTrip(events []corev1.Event) result {
	sort.Slice(events, func(i, j int) bool { return eventTime(&events[i]).Before(eventTime(&events[j])) })
	var notReady *corev1.Event
	for i := range events {
		ev := &events[i]
		switch {
		case ev.Reason == "NodeNotReady":
			notReady = ev
		case ev.Reason == "NodeReady" && notReady != nil:
			return passed("%s NodeNotReady (from %s), then %s NodeReady (from %s)",
				eventTime(notReady).UTC().Format(time.TimeOnly), notReady.Source.Component, eventTime(ev).UTC().Format(time.TimeOnly), ev.Source.Component)
		}
	}
	if notReady != nil {
		return missing("the node went NotReady at "+eventTime(notReady).UTC().Format(time.TimeOnly)+" and has not reported Ready since",
			"resume minikubelet: kill -CONT <pid>; within 10 s it reports Ready")
	}
	return missing("no NodeNotReady event for the node in the last hour",
		"do exercise 4: freeze minikubelet (kill -STOP <pid>) for longer than the grace period (40 s with make run), then resume it (kill -CONT <pid>)")
}

// eventTime is when an event last happened, whichever of its time fields is set.
func eventTime(ev *corev1.Event) time.Time {
	t := ev.LastTimestamp.Time
	if ev.EventTime.After(t) {
		t = ev.EventTime.Time
	}
	if ev.FirstTimestamp.After(t) {
		t = ev.FirstTimestamp.Time
	}
	return t
}

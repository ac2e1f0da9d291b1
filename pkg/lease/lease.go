package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
)

const (
	// Namespace holds one Lease per node, named after the node.
	Namespace = corev1.NamespaceNodeLease

	minBackoff = 200 * time.Millisecond
	maxBackoff = 7 * time.Second
	// jitterFactor spreads renewals of many nodes: up to 4% of the interval, as upstream.
	jitterFactor = 0.04
)

// Config configures the heartbeat.
type Config struct {
	// Client must be a heartbeat client: its own short timeout and no client-side rate limit, so a
	// busy kubelet never delays its heartbeat. Required.
	Client kubernetes.Interface
	// NodeName names the Lease and its holder. Required.
	NodeName string
	// Duration is the lease's leaseDurationSeconds (config nodeLeaseDurationSeconds, default 40 s).
	Duration time.Duration
	// RenewInterval defaults to Duration/4 (KEP-589); it must be shorter than Duration.
	RenewInterval time.Duration
	// OnRenew, if set, is called after each renewal attempt with its latency and error (metrics).
	OnRenew func(latency time.Duration, err error)
	// Journal, if set, records each renewal attempt with its latency and error.
	Journal journal.Recorder
	// Clock defaults to the real clock; Jitter to math/rand (a value in [0,1)).
	Clock  clock.Clock
	Jitter func() float64
}

// Controller keeps the node's Lease fresh. Create it with New; run it with Run.
type Controller struct {
	cfg Config
	// latest is the Lease as the API server last returned it; renewing updates it in place of a
	// GET (one request per renewal). nil means "read it (or create it) first".
	latest *coordinationv1.Lease
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.NodeName == "" {
		return nil, errors.New("lease: Client and NodeName are required")
	}
	if cfg.Duration == 0 {
		cfg.Duration = 40 * time.Second
	}
	if cfg.RenewInterval == 0 {
		cfg.RenewInterval = cfg.Duration / 4
	}
	if cfg.RenewInterval >= cfg.Duration {
		return nil, fmt.Errorf("lease: renew interval %s must be shorter than the lease duration %s", cfg.RenewInterval, cfg.Duration)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	return &Controller{cfg: cfg}, nil
}

// nextDelay decides how long to wait before the next renewal: the jittered renew interval after a
// success; after a failure a backoff that starts at 200 ms, doubles, and is capped at 7 s (so a
// lease of 40 s survives several failed attempts). prevBackoff is 0 after a success.
func nextDelay(renewInterval, prevBackoff time.Duration, failed bool, jitter float64) (delay, backoff time.Duration) {
	if !failed {
		return renewInterval + time.Duration(float64(renewInterval)*jitterFactor*jitter), 0
	}
	backoff = min(max(prevBackoff*2, minBackoff), maxBackoff)
	return backoff, backoff
}

// Run renews the Lease until ctx is cancelled.
func (c *Controller) Run(ctx context.Context) {
	var backoff time.Duration
	for {
		err := c.syncOnce(ctx)
		var delay time.Duration
		delay, backoff = nextDelay(c.cfg.RenewInterval, backoff, err != nil, c.cfg.Jitter())
		if err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Failed to renew the node lease; retrying", "node", c.cfg.NodeName, "retryIn", delay)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.cfg.Clock.After(delay):
		}
	}
}

// syncOnce is one heartbeat: make sure the Lease exists and set its renewTime to now.
func (c *Controller) syncOnce(ctx context.Context) (err error) {
	start := c.cfg.Clock.Now()
	defer func() {
		latency := c.cfg.Clock.Since(start)
		if c.cfg.OnRenew != nil {
			c.cfg.OnRenew(latency, err)
		}
		c.cfg.Journal.Record("renew", journal.PodRef{}, journal.WithError(map[string]string{"latency": latency.String()}, err))
	}()
	leases := c.cfg.Client.CoordinationV1().Leases(Namespace)
	if c.latest == nil {
		lease, err := leases.Get(ctx, c.cfg.NodeName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := leases.Create(ctx, c.desired(ctx, nil), metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create lease %s/%s: %w", Namespace, c.cfg.NodeName, err)
			}
			c.latest = created
			klog.FromContext(ctx).V(2).Info("Created the node lease", "lease", klog.KObj(created))
			return nil
		case err != nil:
			return fmt.Errorf("get lease %s/%s: %w", Namespace, c.cfg.NodeName, err)
		}
		c.latest = lease
	}
	updated, err := leases.Update(ctx, c.desired(ctx, c.latest), metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// Someone else wrote it since we last did (the lease keeper while we sat at a breakpoint,
		// or a second kubelet with our name): read it afresh and try once more at once, as
		// upstream's retryUpdateLease does.
		var fresh *coordinationv1.Lease
		if fresh, err = leases.Get(ctx, c.cfg.NodeName, metav1.GetOptions{}); err == nil {
			updated, err = leases.Update(ctx, c.desired(ctx, fresh), metav1.UpdateOptions{})
		}
	}
	if err != nil {
		// On a conflict (someone else wrote it) or anything else, read it afresh next time.
		c.latest = nil
		return fmt.Errorf("renew lease %s/%s: %w", Namespace, c.cfg.NodeName, err)
	}
	c.latest = updated
	klog.FromContext(ctx).V(4).Info("Renewed the node lease", "renewTime", updated.Spec.RenewTime)
	return nil
}

// desired returns the Lease to write: base (if any) with holder, duration and renewTime set, and an
// owner reference to the Node so the Lease is garbage-collected with it.
func (c *Controller) desired(ctx context.Context, base *coordinationv1.Lease) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.cfg.NodeName, Namespace: Namespace}}
	if base != nil {
		lease = base.DeepCopy()
	}
	lease.Spec.HolderIdentity = ptr.To(c.cfg.NodeName)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(c.cfg.Duration / time.Second))
	lease.Spec.RenewTime = &metav1.MicroTime{Time: c.cfg.Clock.Now()}
	if len(lease.OwnerReferences) == 0 {
		if ref := c.nodeOwnerRef(ctx); ref != nil {
			lease.OwnerReferences = []metav1.OwnerReference{*ref}
		}
	}
	return lease
}

// nodeOwnerRef reads the Node's UID for the owner reference; nil if the Node is not there yet
// (the next renewal tries again), as upstream's setNodeOwnerFunc.
func (c *Controller) nodeOwnerRef(ctx context.Context) *metav1.OwnerReference {
	node, err := c.cfg.Client.CoreV1().Nodes().Get(ctx, c.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return &metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
}

package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// The debug-safe heartbeat (minikubelet's own; no kubelet has it).
//
// A debugger's breakpoint stops every goroutine of the kubelet, the Lease controller's too. After
// the node monitor grace period the node goes NotReady, and five minutes later its pods are
// evicted: a student loses the cluster while reading one function. The keeper is a tiny separate
// process (`minikubelet lease-keeper`, started by `minikubelet --debug-keepalive`) that looks at its
// parent once a second and renews the Lease only while the parent is stopped — state "t" (stopped
// by a tracer: a breakpoint) or "T" (SIGSTOP) in /proc/<pid>/stat. While the parent runs, the
// keeper sends nothing, so what a student watches is the real kubelet's heartbeat.

// KeeperConfig configures a keeper.
type KeeperConfig struct {
	// Client talks as the node (its own client certificate), which NodeRestriction lets renew the
	// node's own Lease and nothing more. Required.
	Client kubernetes.Interface
	// NodeName names the Lease. Required.
	NodeName string
	// ParentPID is the kubelet to watch. Required.
	ParentPID int
	// Duration is the Lease's duration; the keeper renews every Duration/4 while the parent is
	// stopped, as the Controller would.
	Duration time.Duration
	// Poll is how often the keeper looks at the parent (default 1 s).
	Poll time.Duration
	// ProcState reads a process's state letter (default: from /proc/<pid>/stat).
	ProcState func(pid int) (byte, error)
	// Clock times the polls and renewals and gives the renewTime; it defaults to the real clock.
	Clock clock.WithTicker
}

// RunKeeper renews the Lease while the parent is stopped, until the parent exits (returns nil) or
// ctx is cancelled.
func RunKeeper(ctx context.Context, cfg KeeperConfig) error {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.ParentPID <= 0 {
		return errors.New("lease keeper: Client, NodeName and ParentPID are required")
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 40 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.ProcState == nil {
		cfg.ProcState = ProcState
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	logger := klog.FromContext(ctx)
	logger.Info("Lease keeper watching the kubelet; it renews the node lease only while the kubelet is stopped",
		"pid", cfg.ParentPID, "node", cfg.NodeName, "every", cfg.Duration/4)

	var next time.Time // when to renew next while the parent stays stopped; zero while it runs
	ticker := cfg.Clock.NewTicker(cfg.Poll)
	defer ticker.Stop()
	for {
		now := cfg.Clock.Now() // before looking at the parent: one turn, one time
		state, err := cfg.ProcState(cfg.ParentPID)
		if err != nil || state == 'Z' || state == 'X' {
			logger.Info("The kubelet exited; the lease keeper stops too", "pid", cfg.ParentPID)
			return nil
		}
		switch {
		case !stopped(state):
			if !next.IsZero() {
				logger.Info("The kubelet runs again; its own heartbeat takes over", "pid", cfg.ParentPID)
			}
			next = time.Time{}
		case next.IsZero() || !now.Before(next):
			if next.IsZero() {
				logger.Info("The kubelet is stopped (a breakpoint or SIGSTOP); renewing the node lease for it", "pid", cfg.ParentPID, "state", string(state))
			}
			if err := renewFor(ctx, cfg.Client, cfg.NodeName, cfg.Duration, now); err != nil {
				logger.Error(err, "Lease keeper could not renew the node lease; retrying")
				next = now.Add(cfg.Poll)
			} else {
				next = now.Add(cfg.Duration / 4)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// stopped reports whether a /proc state letter means the process cannot run: "T" stopped by a
// signal (SIGSTOP, Ctrl-Z), "t" stopped by a tracer (a debugger at a breakpoint).
func stopped(state byte) bool { return state == 'T' || state == 't' }

// renewFor sets the Lease's renewTime to now (GET then UPDATE; a conflict means the kubelet renewed
// it meanwhile, which is just as good). If the kubelet was stopped before it created its Lease,
// the keeper creates it; the kubelet adds the owner reference when it runs again.
func renewFor(ctx context.Context, client kubernetes.Interface, nodeName string, duration time.Duration, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	leases := client.CoordinationV1().Leases(Namespace)
	l, err := leases.Get(ctx, nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: nodeName, Namespace: Namespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(nodeName),
				LeaseDurationSeconds: ptr.To(int32(duration / time.Second)),
				RenewTime:            &metav1.MicroTime{Time: now},
			},
		}
		if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create lease %s/%s: %w", Namespace, nodeName, err)
		}
		klog.FromContext(ctx).Info("Lease keeper created the node lease the stopped kubelet had not created yet", "node", nodeName)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease %s/%s: %w", Namespace, nodeName, err)
	}
	l.Spec.RenewTime = &metav1.MicroTime{Time: now}
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renew lease %s/%s: %w", Namespace, nodeName, err)
	}
	klog.FromContext(ctx).V(2).Info("Lease keeper renewed the node lease", "node", nodeName)
	return nil
}

// ProcState returns the state letter of process pid from /proc/<pid>/stat ("R", "S", "T", "t", …).
// The command name in parentheses may itself hold spaces or ")", so the state is read after the
// last ")".
func ProcState(pid int) (byte, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcState(string(b))
}

func parseProcState(stat string) (byte, error) {
	i := strings.LastIndexByte(stat, ')')
	rest := strings.TrimLeft(stat[i+1:], " ")
	if i < 0 || rest == "" {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	return rest[0], nil
}

package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/lease"
)

// newLeaseKeeperCommand is `minikubelet lease-keeper`, the child that `--debug-keepalive` starts:
// it renews the node's Lease while its parent kubelet is stopped at a breakpoint (see
// pkg/lease.RunKeeper).
func newLeaseKeeperCommand() *cobra.Command {
	var kubeconfig, nodeName string
	var parent int
	var duration time.Duration
	cmd := &cobra.Command{
		Use:   "lease-keeper",
		Short: "Renew a node's Lease while its kubelet (--parent-pid) is stopped by a debugger; started by --debug-keepalive",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" || nodeName == "" || parent <= 0 {
				return fmt.Errorf("lease-keeper needs --kubeconfig, --node-name and --parent-pid (it is started by minikubelet --debug-keepalive)")
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return fmt.Errorf("load --kubeconfig %s: %w", kubeconfig, err)
			}
			cfg.Timeout = 10 * time.Second
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			ctx := klog.NewContext(cmd.Context(), klog.Background().WithName("lease-keeper"))
			return lease.RunKeeper(ctx, lease.KeeperConfig{
				Client: client, NodeName: nodeName, ParentPID: parent, Duration: duration,
				// Also stop when we were re-parented: the kubelet died and PDEATHSIG did not reach us.
				ProcState: func(pid int) (byte, error) {
					if os.Getppid() != pid {
						return 0, fmt.Errorf("parent %d is gone", pid)
					}
					return lease.ProcState(pid)
				},
			})
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the node's kubeconfig (its client certificate)")
	cmd.Flags().StringVar(&nodeName, "node-name", "", "the node whose Lease to renew")
	cmd.Flags().IntVar(&parent, "parent-pid", 0, "the kubelet process to watch; the keeper exits with it")
	cmd.Flags().DurationVar(&duration, "lease-duration", 40*time.Second, "the Lease's duration (renewals every quarter of it)")
	return cmd
}

// startLeaseKeeper starts `minikubelet lease-keeper` as a child that dies with this process
// (PR_SET_PDEATHSIG). PDEATHSIG fires when the *thread* that forked the child exits, so the fork
// happens on a goroutine locked to its thread for the child's whole life.
func startLeaseKeeper(ctx context.Context, kubeconfig, nodeName string, duration time.Duration) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--debug-keepalive: find our own binary: %w", err)
	}
	logger := klog.FromContext(ctx)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the child
		cmd := exec.Command(self, "lease-keeper", "--kubeconfig", kubeconfig, "--node-name", nodeName,
			"--parent-pid", strconv.Itoa(os.Getpid()), "--lease-duration", duration.String())
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("--debug-keepalive: start the lease keeper: %w", err)
			return
		}
		logger.Info("Started the lease keeper: the node stays Ready while a debugger holds minikubelet stopped", "pid", cmd.Process.Pid)
		started <- nil
		err := cmd.Wait()
		if ctx.Err() == nil {
			logger.Error(err, "The lease keeper exited; breakpoints will again let the node go NotReady")
		}
	}()
	return <-started
}

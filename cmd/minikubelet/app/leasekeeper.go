package app

import (
	"fmt"
	"os"
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

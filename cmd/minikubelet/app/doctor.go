package app

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/version"
	"github.com/minikubelet/minikubelet/tools/doctor"
)

// newDoctorCommand is `minikubelet doctor`: it takes the same flags as `minikubelet` and checks
// the setup they describe, one line per check, with a fix for every problem. It exits 1 if any
// check failed.
func newDoctorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor [flags of minikubelet]",
		Short: "Check the setup minikubelet would run with, and say how to fix what is wrong",
		Long: `doctor checks, with the same flags as minikubelet, what minikubelet needs before it can join
a cluster, and prints one line per check ([OK], [WARN], [FAIL] with a fix, [SKIP]):

  1. --bootstrap-kubeconfig (and --kubeconfig, once written) loads, and its API server answers
     over TLS verified with the kubeconfig's CA (never skipping verification);
  2. the bootstrap token is accepted and is in group system:bootstrappers (SelfSubjectReview);
  3. RBAC lets kube-controller-manager approve the node's CSRs (SelfSubjectAccessReview on
     certificatesigningrequests, /nodeclient, and as the node /selfnodeclient);
  4. the kubelet's and kube-apiserver's versions are within the version skew policy;
  5. the container runtime answers CRI Version;
  6. --cert-dir and --root-dir are writable;
  7. the kubelet API's --address:--port is free.

It changes nothing on the cluster or the disk. Example, with the flags of make run:

  minikubelet doctor --bootstrap-kubeconfig _output/cluster/bootstrap.kubeconfig \
    --root-dir _output/run --node-ip 127.0.0.1 --address 127.0.0.1 --port 10250`,
		Args: cobra.NoArgs,
	}
	opts := options.AddFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := opts.Complete(cmd.Flags()); err != nil {
			return err
		}
		ctx := klog.NewContext(cmd.Context(), klog.Background().WithName("doctor"))
		results, err := doctor.Run(ctx, doctor.Config{
			BootstrapKubeconfig: opts.BootstrapKubeconfig,
			Kubeconfig:          opts.Kubeconfig,
			CertDir:             opts.CertDir,
			RootDir:             opts.RootDir,
			RuntimeEndpoint:     opts.ContainerRuntimeEndpoint,
			Address:             opts.Config.Address,
			Port:                opts.Config.Port,
			RotateCertificates:  opts.Config.RotateCertificates,
			KubeletVersion:      version.Get().Kubernetes,
		}, cmd.OutOrStdout())
		if err != nil {
			return err
		}
		// The summary is the last line: on stdout when all is well, else as the command's error
		// (on stderr, exit status 1), as every failing minikubelet command ends.
		summary, failed := doctor.Summarize(results)
		if failed {
			return errors.New(summary)
		}
		fmt.Fprintln(cmd.OutOrStdout(), summary)
		return nil
	}
	return cmd
}

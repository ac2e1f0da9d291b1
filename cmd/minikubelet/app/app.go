// Package app holds minikubelet's cobra commands: the root command that runs the kubelet, and its
// subcommands. It turns flags and the config file into validated options and calls run(), whose
// body shows the kubelet's start order. Upstream counterpart: cmd/kubelet/app/server.go.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/logsafe"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/version"
)

// Main runs minikubelet with args (without the program name) and returns the process exit code:
// 0 on success or a clean shutdown, 1 on any error, which is printed as one line on stderr.
func Main(args []string, stdout, stderr io.Writer) int {
	// Whatever -v says, API request and response bodies (Secrets, tokens) are never logged.
	klog.SetLogFilter(logsafe.BodyFilter{})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return execute(ctx, args, stdout, stderr, run)
}

// execute is Main once the signals are wired: ctx ends on SIGINT/SIGTERM; run runs the kubelet.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer, run runFunc) int {
	cmd := newRootCommand(stdout, stderr, run)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "minikubelet: %v\n", err)
		if isUsageError(err) {
			fmt.Fprintln(stderr, "Run 'minikubelet --help' for usage.")
		}
		return 1
	}
	return 0
}

// usageError marks errors about the command line itself (unknown flag, bad value).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// runFunc runs the kubelet with complete, validated options (run; tests pass their own).
type runFunc func(ctx context.Context, o *options.Options) error

// newRootCommand returns the `minikubelet` command: with no subcommand it runs the kubelet (run).
func newRootCommand(stdout, stderr io.Writer, run runFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "minikubelet",
		Short: "A small, readable kubelet: joins a real cluster and runs its pods through CRI",
		Long: `minikubelet is a small, readable kubelet for learning how the kubelet works.

It bootstraps a client certificate from a bootstrap token (TLS bootstrap), registers a Node,
keeps its Lease and status fresh, and (as the project grows) runs pods through a CRI runtime.
Flags follow the real kubelet's; a KubeletConfiguration file can be given with --config.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	addKlogFlags(cmd.PersistentFlags())
	opts := options.AddFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := opts.Complete(cmd.Flags()); err != nil {
			return err
		}
		logger := klog.Background()
		ctx := klog.NewContext(cmd.Context(), logger)
		if len(opts.IgnoredConfigFields) > 0 {
			logger.Info("Ignoring KubeletConfiguration fields minikubelet does not implement", "fields", strings.Join(opts.IgnoredConfigFields, ","))
		}
		err := run(ctx, opts)
		if err != nil && ctx.Err() != nil {
			// SIGINT/SIGTERM while starting (waiting for the CSR, dialing the runtime): the step
			// that was interrupted fails with "context canceled", but the user asked to stop, so
			// this is a clean shutdown, as it is once running.
			logger.Info("Stopped while starting", "interrupted", err.Error())
			return nil
		}
		return err
	}
	cmd.AddCommand(newVersionCommand(), newFakeRuntimeCommand(), newLeaseKeeperCommand())
	cmd.AddCommand(newDoctorCommand())
	cmd.AddCommand(newJournalCommand())
	return cmd
}

// addKlogFlags exposes klog's -v and --vmodule, the two logging flags the kubelet course uses.
func addKlogFlags(fs *pflag.FlagSet) {
	goflags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(goflags)
	for _, name := range []string{"v", "vmodule"} {
		f := pflag.PFlagFromGoFlag(goflags.Lookup(name))
		if name == "v" {
			f.Shorthand = "v"
		}
		fs.AddFlag(f)
	}
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print minikubelet's version and the Kubernetes version it is built against",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := version.Get()
			fmt.Fprintf(cmd.OutOrStdout(), "minikubelet %s (commit %s)\nKubernetes %s (k8s.io modules %s)\n",
				v.Version, v.GitCommit, v.Kubernetes, v.KubernetesLib)
			return nil
		},
	}
}

package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/cri/fake"
)

const defaultFakeSocket = "/var/lib/minikubelet/fake-runtime.sock"

// newFakeRuntimeCommand is `minikubelet fake-runtime`: serve the fake CRI runtime as its own
// process, and break it on purpose for labs.
func newFakeRuntimeCommand() *cobra.Command {
	var socket string
	cmd := &cobra.Command{
		Use:   "fake-runtime",
		Short: "Run the fake CRI runtime on its own, or inject faults into a running one",
		Long: `The fake CRI runtime is a real CRI v1 gRPC server on a unix socket that keeps containers in
memory; a container's command decides what it does (sleep infinity, sleep 5, sh -c "exit 3",
echo hi). crictl talks to it: crictl -r unix://<socket> ps -a.

minikubelet starts one in-process on <root-dir>/fake-runtime.sock unless given
--container-runtime-endpoint. Run it standalone (so it outlives kubelet restarts, as a real runtime
does) with 'fake-runtime serve', and point minikubelet at it with --container-runtime-endpoint.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&socket, "socket", defaultFakeSocket, "the fake runtime's CRI socket (its admin socket is <socket>.admin)")
	admin := func() *fake.AdminClient { return fake.NewAdminClient(strings.TrimPrefix(socket, "unix://") + ".admin") }
	done := func(cmd *cobra.Command, what string) {
		fmt.Fprintln(cmd.OutOrStdout(), what)
	}

	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the fake CRI runtime on --socket until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := strings.TrimPrefix(socket, "unix://")
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				return fmt.Errorf("create the directory of --socket %s: %w", path, err)
			}
			rt, err := fake.New(fake.Config{Socket: path})
			if err != nil {
				return err
			}
			ctx := klog.NewContext(cmd.Context(), klog.Background().WithName("fake-runtime"))
			klog.FromContext(ctx).Info("Serving the fake CRI runtime", "endpoint", rt.Endpoint(), "admin", rt.AdminSocket())
			return rt.Serve(ctx)
		},
	}
	var exitCode int32
	kill := &cobra.Command{
		Use:   "kill-container CONTAINER-ID",
		Short: "Make a running container exit with --exit-code (as if its process died)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := admin().KillContainer(cmd.Context(), args[0], exitCode); err != nil {
				return err
			}
			done(cmd, fmt.Sprintf("container %s exited with code %d", args[0], exitCode))
			return nil
		},
	}
	kill.Flags().Int32Var(&exitCode, "exit-code", 137, "the exit code the container reports")
	notReady := &cobra.Command{
		Use:   "sandbox-not-ready SANDBOX-ID",
		Short: "Mark a pod sandbox NOTREADY (as if its network namespace vanished)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := admin().SetSandboxNotReady(cmd.Context(), args[0]); err != nil {
				return err
			}
			done(cmd, "sandbox "+args[0]+" is NOTREADY")
			return nil
		},
	}
	var count int
	var message string
	failPulls := &cobra.Command{
		Use:   "fail-pulls IMAGE",
		Short: "Make the next --count pulls of IMAGE fail with --message",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := admin().FailNextPulls(cmd.Context(), args[0], count, message); err != nil {
				return err
			}
			done(cmd, fmt.Sprintf("the next %d pulls of %s will fail", count, args[0]))
			return nil
		},
	}
	failPulls.Flags().IntVar(&count, "count", 1, "how many pulls fail")
	failPulls.Flags().StringVar(&message, "message", "injected pull failure", "the error message")
	latency := &cobra.Command{
		Use:   "latency METHOD DURATION",
		Short: "Delay every call of a CRI method (e.g. ListContainers 2s; 0s removes it)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return fmt.Errorf("duration %q: %w (write e.g. 500ms or 2s)", args[1], err)
			}
			if err := admin().AddLatency(cmd.Context(), args[0], d); err != nil {
				return err
			}
			done(cmd, fmt.Sprintf("%s now takes %s longer", args[0], d))
			return nil
		},
	}
	var reason string
	runtimeNotReady := &cobra.Command{
		Use:   "runtime-not-ready",
		Short: "Make the runtime's Status report RuntimeReady=false (the node goes NotReady)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := admin().SetRuntimeNotReady(cmd.Context(), reason, message); err != nil {
				return err
			}
			done(cmd, "the runtime reports not ready")
			return nil
		},
	}
	runtimeNotReady.Flags().StringVar(&reason, "reason", "InjectedFault", "the condition's reason")
	runtimeNotReady.Flags().StringVar(&message, "message", "made not ready with minikubelet fake-runtime", "the condition's message")
	runtimeReady := &cobra.Command{
		Use:   "runtime-ready",
		Short: "Undo runtime-not-ready",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := admin().SetRuntimeReady(cmd.Context()); err != nil {
				return err
			}
			done(cmd, "the runtime reports ready")
			return nil
		},
	}
	state := &cobra.Command{
		Use:   "state",
		Short: "Print the runtime's sandboxes and containers as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := admin().State(cmd.Context())
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		},
	}
	cmd.AddCommand(serve, kill, notReady, failPulls, latency, runtimeNotReady, runtimeReady, state)
	return cmd
}

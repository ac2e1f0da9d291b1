package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/kubelet"
)

const defaultFakeSocket = "/var/lib/minikubelet/fake-runtime.sock"

// newFakeRuntimeCommand is `minikubelet fake-runtime`: serve the fake CRI runtime as its own
// process, and break it on purpose for labs.
func newFakeRuntimeCommand() *cobra.Command {
	var socket, podCIDR string
	cmd := &cobra.Command{
		Use:   "fake-runtime",
		Short: "Run the fake CRI runtime on its own, or inject faults into a running one",
		Long: `The fake CRI runtime is a real CRI v1 gRPC server on a unix socket that keeps containers in
memory; a container's command decides what it does (sleep infinity, sleep 5, sh -c "exit 3",
echo hi, sh -c "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy", serve http 8080 /healthz=200).
It never runs a host command: files a container writes live in memory or in its CRI mounts, and
serve listens on the pod IP, a loopback address (--pod-cidr, default ` + fakeruntime.DefaultPodCIDR + `).
crictl talks to it: crictl -r unix://<socket> ps -a.

minikubelet starts one in-process on <root-dir>/fake-runtime.sock unless given
--container-runtime-endpoint. Run it standalone (so it outlives kubelet restarts, as a real runtime
does) with 'fake-runtime serve', and point minikubelet at it with --container-runtime-endpoint.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&socket, "socket", defaultFakeSocket, "the fake runtime's CRI socket (its admin socket is <socket>.admin)")
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the fake CRI runtime on --socket until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := strings.TrimPrefix(socket, "unix://")
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				return fmt.Errorf("create the directory of --socket %s: %w", path, err)
			}
			rt, err := fakeruntime.New(fakeruntime.Config{Socket: path, PodCIDR: podCIDR})
			if err != nil {
				return err
			}
			ctx := klog.NewContext(cmd.Context(), klog.Background().WithName("fake-runtime"))
			klog.FromContext(ctx).Info("Serving the fake CRI runtime", "endpoint", rt.Endpoint(), "admin", rt.AdminSocket())
			return rt.Serve(ctx)
		},
	}
	serve.Flags().StringVar(&podCIDR, "pod-cidr", fakeruntime.DefaultPodCIDR, "IPv4 range of pod IPs; containers can serve only inside 127.0.0.0/8")
	state := &cobra.Command{
		Use:   "state",
		Short: "Print the runtime's sandboxes and containers as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := fakeruntime.NewAdminClient(adminSocket(socket)).State(cmd.Context())
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		},
	}
	cmd.AddCommand(serve, state)
	// One subcommand per fault of the fake's fault table: kill-container, sandbox-not-ready, …
	for _, f := range fakeruntime.Faults() {
		cmd.AddCommand(newFaultCommand(f, &socket))
	}
	return cmd
}

// newFaultCommand is `minikubelet fake-runtime <fault> ARGS… [--flags]`: it fills the fault's
// arguments from the command line, asks the runtime on *socket to inject it and says so.
func newFaultCommand(f fakeruntime.Fault, socket *string) *cobra.Command {
	var args fakeruntime.FaultArgs
	var positional []*string
	if f.Args != nil {
		positional = f.Args(&args)
	}
	argsCheck := cobra.ExactArgs(len(positional))
	if len(positional) == 0 {
		argsCheck = cobra.NoArgs
	}
	cmd := &cobra.Command{
		Use:   f.Use,
		Short: f.Short,
		Args:  argsCheck,
		RunE: func(cmd *cobra.Command, values []string) error {
			for i, v := range values {
				*positional[i] = v
			}
			if err := fakeruntime.NewAdminClient(adminSocket(*socket)).Inject(cmd.Context(), f.Name(), args); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), f.Done(args))
			return nil
		},
	}
	if f.Flags != nil {
		f.Flags(cmd.Flags(), &args)
	}
	return cmd
}

// adminSocket is the admin socket of the fake runtime serving the CRI socket (or endpoint) socket.
func adminSocket(socket string) string {
	return strings.TrimPrefix(socket, "unix://") + ".admin"
}

// The built-in runtime, handed to the kubelet (pkg/kubelet never imports fakeruntime/: it serves
// whatever RuntimeServer it is given, as upstream's kubelet dials whatever runtime runs).

// newFakeRuntime is kubelet.Config.FakeRuntime: the fake runtime of a kubelet alone.
func newFakeRuntime(socket, podCIDR string) (kubelet.RuntimeServer, error) {
	return served(fakeruntime.New(fakeruntime.Config{Socket: socket, PodCIDR: podCIDR}))
}

// served hands the kubelet a runtime, or its error: never a nil *Runtime inside a non-nil
// interface, which the kubelet could not tell from a runtime.
func served(rt *fakeruntime.Runtime, err error) (kubelet.RuntimeServer, error) {
	if err != nil {
		return nil, err
	}
	return rt, nil
}

// fakeMux is kubelet.SharedConfig.FakeRuntimes: the fake runtimes of --nodes on one socket.
type fakeMux struct{ *fakeruntime.Mux }

var _ kubelet.RuntimeMux = fakeMux{}

func (m fakeMux) NewRuntime(node, podCIDR string) (kubelet.RuntimeServer, error) {
	return served(m.Mux.NewRuntime(node, fakeruntime.Config{PodCIDR: podCIDR}))
}

func (fakeMux) NodeKey() string { return fakeruntime.NodeMetadataKey }

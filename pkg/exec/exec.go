package exec

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Runtime is the part of the CRI runtime service that exec, attach and port-forward need. None
// of its calls starts a stream: each asks the runtime's streaming server for a one-time URL and
// returns quickly. The caller owns the returned response.
type Runtime interface {
	// Exec returns the URL that, dialled once, runs in.Cmd in the running container in.ContainerId.
	Exec(ctx context.Context, in *runtimeapi.ExecRequest, opts ...grpc.CallOption) (*runtimeapi.ExecResponse, error)
	// Attach returns the URL that, dialled once, connects to the container's main process.
	Attach(ctx context.Context, in *runtimeapi.AttachRequest, opts ...grpc.CallOption) (*runtimeapi.AttachResponse, error)
	// PortForward returns the URL that, dialled once, forwards ports into sandbox in.PodSandboxId's
	// network; the ports come later, in the headers of each stream.
	PortForward(ctx context.Context, in *runtimeapi.PortForwardRequest, opts ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error)
}

// The CRI gRPC client (pkg/cri/remote, or runtimeapi.NewRuntimeServiceClient) is a Runtime.
var _ Runtime = runtimeapi.RuntimeServiceClient(nil)

// Options are the streams an exec or attach session carries (upstream remotecommand.Options).
type Options struct {
	Stdin, Stdout, Stderr, TTY bool
}

// ParseOptions reads the stream options of an exec or attach request as upstream
// remotecommand.NewOptions, under the names the API server sends (corev1.ExecStdinParam "input",
// ExecStdoutParam "output", ExecStderrParam "error", ExecTTYParam "tty"): each is on only if
// "1"; a TTY merges stderr into stdout; at least one stream is needed.
func ParseOptions(query url.Values) (Options, error) {
	o := Options{
		Stdin:  query.Get(corev1.ExecStdinParam) == "1",
		Stdout: query.Get(corev1.ExecStdoutParam) == "1",
		Stderr: query.Get(corev1.ExecStderrParam) == "1",
		TTY:    query.Get(corev1.ExecTTYParam) == "1",
	}
	if o.TTY {
		o.Stderr = false
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return o, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// Proxy serves exec, attach and port-forward requests whose target the caller has already
// resolved: it asks Runtime for the streaming URL and proxies the request there. It keeps no
// per-request state and is safe for concurrent use.
type Proxy struct {
	runtime Runtime
}

// NewProxy returns a Proxy that asks runtime for streaming URLs. runtime must not be nil.
func NewProxy(runtime Runtime) *Proxy {
	return &Proxy{runtime: runtime}
}

// Exec runs cmd in containerID for the upgrade request r: CRI Exec for a URL, then proxyStream
// until the session ends (upstream: getExec after the pod lookup, and GetExec).
func (p *Proxy) Exec(w http.ResponseWriter, r *http.Request, containerID string, cmd []string, opts Options) {
	resp, err := p.runtime.Exec(r.Context(), &runtimeapi.ExecRequest{
		ContainerId: containerID,
		Cmd:         cmd,
		Stdin:       opts.Stdin,
		Stdout:      opts.Stdout,
		Stderr:      opts.Stderr,
		Tty:         opts.TTY,
	})
	if err != nil {
		WriteError(w, err)
		return
	}
	proxyStream(w, r, resp.GetUrl())
}

// Attach connects r to containerID's main process, like Exec with CRI Attach.
func (p *Proxy) Attach(w http.ResponseWriter, r *http.Request, containerID string, opts Options) {
	resp, err := p.runtime.Attach(r.Context(), &runtimeapi.AttachRequest{
		ContainerId: containerID,
		Stdin:       opts.Stdin,
		Stdout:      opts.Stdout,
		Stderr:      opts.Stderr,
		Tty:         opts.TTY,
	})
	if err != nil {
		WriteError(w, err)
		return
	}
	proxyStream(w, r, resp.GetUrl())
}

// PortForward forwards ports into sandboxID's network for r, with CRI PortForward. The request
// names no ports: kubectl opens one pair of streams per port, and the runtime's streaming server
// reads the port from each stream's headers (upstream passes no ports to the runtime either).
func (p *Proxy) PortForward(w http.ResponseWriter, r *http.Request, sandboxID string) {
	resp, err := p.runtime.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID})
	if err != nil {
		WriteError(w, err)
		return
	}
	proxyStream(w, r, resp.GetUrl())
}

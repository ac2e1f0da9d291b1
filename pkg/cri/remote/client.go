package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

const (
	// MaxMsgSize is the largest CRI message sent or received, as in k8s.io/cri-client.
	MaxMsgSize = 16 * 1024 * 1024
	// DefaultTimeout is the kubelet's default --runtime-request-timeout.
	DefaultTimeout = 2 * time.Minute
	// criVersion is the only CRI API version minikubelet speaks.
	criVersion = "v1"
)

// Client is a connection to a CRI runtime. Its clients may be used concurrently; Close ends them.
type Client struct {
	// Runtime is the CRI RuntimeService: sandboxes, containers, exec, stats, status.
	Runtime runtimeapi.RuntimeServiceClient
	// Image is the CRI ImageService: pull, list, status, remove, image filesystem.
	Image runtimeapi.ImageServiceClient

	conn     *grpc.ClientConn // nil for a Client of a shared connection (ForNode)
	endpoint string
	version  *runtimeapi.VersionResponse
}

// Dial connects to the runtime at endpoint ("unix:///run/containerd/containerd.sock" or a bare
// path), checks that it speaks CRI v1 and returns a Client whose unary calls time out after
// timeout (DefaultTimeout if <= 0). The handshake is bounded by ctx and by timeout.
func Dial(ctx context.Context, endpoint string, timeout time.Duration) (*Client, error) {
	conn, err := DialConn(endpoint, timeout)
	if err != nil {
		return nil, err
	}
	c, err := newClient(ctx, conn, endpoint)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	c.conn = conn
	return c, nil
}

// DialConn makes the gRPC connection Dial uses, without the handshake: for a connection shared
// by many Clients (ForNode). The caller closes it.
func DialConn(endpoint string, timeout time.Duration) (*grpc.ClientConn, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	path, err := socketPath(endpoint)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cannot reach the container runtime at %s: is it running? (%w)", endpoint, err)
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()), // a local unix socket: no TLS
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMsgSize), grpc.MaxCallSendMsgSize(MaxMsgSize)),
		grpc.WithConnectParams(reconnectParams()),
		grpc.WithChainUnaryInterceptor(timeoutInterceptor(timeout)),
	)
	if err != nil {
		return nil, fmt.Errorf("create CRI client for %s: %w", endpoint, err)
	}
	return conn, nil
}

// ForNode returns a Client over conn (DialConn) whose every call names node in the gRPC
// metadata key — a fake.Mux serves many nodes' runtimes on one socket and routes by it — after
// the same handshake as Dial. Its Close leaves conn open: conn's owner closes it.
func ForNode(ctx context.Context, conn *grpc.ClientConn, endpoint, key, node string) (*Client, error) {
	return newClient(ctx, nodeConn{conn, []string{key, node}}, endpoint)
}

// nodeConn adds metadata to every call on a shared connection.
type nodeConn struct {
	grpc.ClientConnInterface
	kv []string
}

func (n nodeConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return n.ClientConnInterface.Invoke(metadata.AppendToOutgoingContext(ctx, n.kv...), method, args, reply, opts...)
}

func (n nodeConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return n.ClientConnInterface.NewStream(metadata.AppendToOutgoingContext(ctx, n.kv...), desc, method, opts...)
}

// newClient makes the service clients over cc and checks the runtime's version.
func newClient(ctx context.Context, cc grpc.ClientConnInterface, endpoint string) (*Client, error) {
	c := &Client{
		Runtime:  runtimeapi.NewRuntimeServiceClient(cc),
		Image:    runtimeapi.NewImageServiceClient(cc),
		endpoint: endpoint,
	}
	if err := c.handshake(ctx); err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Connected to container runtime", "endpoint", endpoint,
		"runtimeName", c.version.GetRuntimeName(), "runtimeVersion", c.version.GetRuntimeVersion())
	return c, nil
}

// handshake calls Version and checks the answer, as the kubelet does before anything else.
func (c *Client) handshake(ctx context.Context) error {
	v, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{Version: criVersion})
	switch status.Code(err) {
	case codes.OK:
	case codes.Unimplemented:
		return fmt.Errorf("the runtime at %s does not speak CRI %s: %w (upgrade it, e.g. containerd 1.7+)", c.endpoint, criVersion, err)
	case codes.Unavailable, codes.DeadlineExceeded:
		return fmt.Errorf("cannot reach the container runtime at %s: is it running? %w", c.endpoint, err)
	default:
		return fmt.Errorf("CRI handshake (Version) with the runtime at %s: %w", c.endpoint, err)
	}
	if v.GetRuntimeApiVersion() != criVersion {
		return fmt.Errorf("the runtime at %s does not speak CRI %s: it reports API version %q", c.endpoint, criVersion, v.GetRuntimeApiVersion())
	}
	c.version = v
	return nil
}

// Version is the runtime's answer to the connect-time handshake.
func (c *Client) Version() *runtimeapi.VersionResponse { return c.version }

// Close closes the connection; calls in flight fail. A Client of a shared connection (ForNode)
// has nothing to close.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("close CRI connection to %s: %w", c.endpoint, err)
	}
	return nil
}

// socketPath extracts the unix socket path from an endpoint.
func socketPath(endpoint string) (string, error) {
	path := endpoint
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok {
		if scheme != "unix" {
			return "", fmt.Errorf("CRI endpoint %q: only unix sockets are supported (unix:///path/to/runtime.sock), not %q", endpoint, scheme)
		}
		path = rest
	}
	if path == "" {
		return "", errors.New("CRI endpoint is empty: give one like unix:///run/containerd/containerd.sock")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("CRI endpoint %q: %w", endpoint, err)
	}
	return abs, nil
}

// reconnectParams make the one connection the kubelet keeps come back soon after the runtime
// does (a containerd restart or upgrade): retry after 100 ms, backing off to 3 s at most, each
// attempt given 5 s, as k8s.io/cri-client does. gRPC's default backs off to 120 s, which would
// keep the node NotReady for up to two minutes after the runtime is back.
func reconnectParams() grpc.ConnectParams {
	p := grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 5 * time.Second}
	p.Backoff.BaseDelay = 100 * time.Millisecond
	p.Backoff.MaxDelay = 3 * time.Second
	return p
}

// timeoutInterceptor bounds each unary call by timeout unless ctx already ends sooner, as
// upstream's cri-client does, with its exceptions: StopContainer gets timeout plus the container's
// grace period, ExecSync timeout plus its own timeout (none when that is 0: a lifecycle hook), and
// PullImage no deadline at all (a large image may take long).
func timeoutInterceptor(timeout time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if d, ok := callTimeout(timeout, req); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// callTimeout is the deadline of one CRI call with request req, and false for none. Pure.
func callTimeout(timeout time.Duration, req any) (time.Duration, bool) {
	switch r := req.(type) {
	case *runtimeapi.StopContainerRequest:
		return timeout + time.Duration(r.GetTimeout())*time.Second, true
	case *runtimeapi.ExecSyncRequest:
		if r.GetTimeout() == 0 {
			return 0, false
		}
		return timeout + time.Duration(r.GetTimeout())*time.Second, true
	case *runtimeapi.PullImageRequest:
		return 0, false
	}
	return timeout, true
}

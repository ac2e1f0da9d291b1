package fakeruntime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Names the runtime reports in Version and Status.
const (
	// RuntimeName is VersionResponse.RuntimeName.
	RuntimeName = "minikubelet-fake"
	// RuntimeVersion is VersionResponse.RuntimeVersion.
	RuntimeVersion = "0.1.0"
	// RuntimeAPIVersion is the CRI version spoken, VersionResponse.RuntimeApiVersion.
	RuntimeAPIVersion = "v1"

	// DefaultPodCIDR is where sandbox IPs come from when Config.PodCIDR is empty: a loopback
	// range, so that a container can serve on its pod IP and the host reach it with no change
	// to the host's network (every 127/8 address is local on Linux).
	DefaultPodCIDR = "127.88.0.0/16"
	// DefaultStreamingAddr is where the streaming server listens when Config.StreamingAddr is
	// empty: loopback, on a free port (containerd's default stream_server_address is 127.0.0.1).
	DefaultStreamingAddr = "127.0.0.1:0"

	// maxMsgSize matches the kubelet's CRI client limit (k8s.io/cri-client utils.go).
	maxMsgSize = 16 * 1024 * 1024
	// maxUnixSocketPath is sizeof(sockaddr_un.sun_path) - 1 on Linux.
	maxUnixSocketPath = 107
	// shutdownGrace is how long Serve lets in-flight calls finish after ctx is cancelled.
	shutdownGrace = 5 * time.Second
)

// Config configures a fake Runtime.
type Config struct {
	// Socket is the path of the CRI unix socket. Required.
	Socket string
	// AdminSocket is the path of the fault-injection HTTP socket. Default: Socket + ".admin".
	AdminSocket string
	// Clock drives programs (sleep N), timestamps, latency and stats. Default: the real clock.
	Clock clock.WithDelayedExecution
	// LogRoot is the directory for relative container LogPaths of sandboxes without a
	// LogDirectory. Default: empty, and such output is discarded.
	LogRoot string
	// PodCIDR is the IPv4 range sandbox IPs come from. Default: DefaultPodCIDR. Containers can
	// serve only if it lies in 127.0.0.0/8: the runtime never configures the host's network.
	PodCIDR string
	// StreamingAddr is the host:port of the streaming HTTP server that serves the URLs Exec,
	// Attach and PortForward return. It must be a loopback address: the server speaks plain HTTP
	// and a one-time token is its only check, so only the kubelet on this machine may reach it.
	// Port 0 picks a free port (see StreamingURL). Default: DefaultStreamingAddr.
	StreamingAddr string
}

// Runtime is an in-memory CRI v1 runtime and image service. Create it with New, serve it with
// Serve. All methods are safe for concurrent use.
type Runtime struct {
	// The embedded types make future CRI methods return Unimplemented instead of failing to build.
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	cfg     Config
	clock   clock.WithDelayedExecution
	podCIDR netip.Prefix
	ready   chan struct{} // closed once Serve accepts connections
	// sessions tracks open exec/attach/port-forward connections, so Serve can cut them on stop.
	sessions *streamSessions

	// wg counts program steps resumed by timers and interactive shells of containers, so Serve
	// can wait for them on shutdown.
	wg sync.WaitGroup
	// background is the context of the containers' interactive shells; shutdown cancels it.
	background     context.Context
	stopBackground context.CancelFunc

	mu         sync.Mutex
	seq        uint64 // last sequence number given to an object
	sandboxes  map[string]*sandbox
	containers map[string]*container
	images     map[string]*image // by image ID
	usedIPs    map[netip.Addr]string
	listeners  map[netip.AddrPort]*server // what containers serve, for port-forward
	// reachable mirrors the keys of listeners, readable without mu: wget and curl in a program
	// that runs under mu check their address against it (fetch.go).
	reachable sync.Map
	events    eventBus
	faults    faults
	netConfig *runtimeapi.RuntimeConfig // last UpdateRuntimeConfig
	served    bool                      // Serve was called
	stopped   bool                      // Serve is shutting down; timers no longer fire
	logger    klog.Logger               // for work not tied to a call (program steps); set by Serve
	streams   streaming.Server          // hands out streaming URLs; set by Serve
	streamURL string                    // base URL of the streaming server; set by Serve

	// mux, when set (Mux.NewRuntime), serves this runtime's CRI calls for node: Serve then
	// serves only the streaming server, no socket of its own.
	mux  *Mux
	node string
}

var (
	_ runtimeapi.RuntimeServiceServer = (*Runtime)(nil)
	_ runtimeapi.ImageServiceServer   = (*Runtime)(nil)
)

// New validates cfg, fills its defaults and returns a Runtime with no sandboxes, containers or
// images.
func New(cfg Config) (*Runtime, error) {
	if cfg.Socket == "" {
		return nil, errors.New("fake runtime: Config.Socket is required: give the path of the CRI socket to serve")
	}
	if cfg.AdminSocket == "" {
		cfg.AdminSocket = cfg.Socket + ".admin"
	}
	for _, p := range []string{cfg.Socket, cfg.AdminSocket} {
		if err := checkSocketPath(p); err != nil {
			return nil, err
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.PodCIDR == "" {
		cfg.PodCIDR = DefaultPodCIDR
	}
	prefix, err := netip.ParsePrefix(cfg.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("fake runtime: parse Config.PodCIDR %q: %w", cfg.PodCIDR, err)
	}
	if !prefix.Addr().Is4() || prefix.Bits() > 30 {
		return nil, fmt.Errorf("fake runtime: Config.PodCIDR %q must be an IPv4 range of /30 or larger, like %s", cfg.PodCIDR, DefaultPodCIDR)
	}
	if cfg.StreamingAddr == "" {
		cfg.StreamingAddr = DefaultStreamingAddr
	}
	if err := validateStreamingAddr(cfg.StreamingAddr); err != nil {
		return nil, err
	}
	background, stopBackground := context.WithCancel(context.Background())
	return &Runtime{
		background:     background,
		stopBackground: stopBackground,
		cfg:            cfg,
		clock:          cfg.Clock,
		podCIDR:        prefix.Masked(),
		ready:          make(chan struct{}),
		sessions:       &streamSessions{conns: map[net.Conn]int{}},
		sandboxes:      map[string]*sandbox{},
		containers:     map[string]*container{},
		images:         map[string]*image{},
		usedIPs:        map[netip.Addr]string{},
		listeners:      map[netip.AddrPort]*server{},
		events:         eventBus{},
		faults:         faults{pullFailures: map[string]*pullFailure{}, latency: map[string]time.Duration{}},
		logger:         klog.Background().WithName("fake-runtime"),
	}, nil
}

// nextSeqLocked numbers objects in creation order.
func (r *Runtime) nextSeqLocked() uint64 {
	r.seq++
	return r.seq
}

// Ready is closed once Serve listens on both sockets.
func (r *Runtime) Ready() <-chan struct{} { return r.ready }

// Endpoint is the CRI endpoint of the runtime, as the kubelet's --container-runtime-endpoint and
// crictl's -r take it.
func (r *Runtime) Endpoint() string { return "unix://" + r.cfg.Socket }

// AdminSocket is the path of the fault-injection socket.
func (r *Runtime) AdminSocket() string { return r.cfg.AdminSocket }

// Serve listens on the CRI socket, the admin socket and the streaming address and serves until
// ctx is cancelled; then it stops gracefully, cuts open streaming sessions, removes both sockets
// and returns nil. A stale socket file left by a crashed runtime is removed first; a socket
// another process still serves is an error. Serve may be called once. It logs with ctx's logger,
// which the caller names (the kubelet's step "fake-runtime", or `minikubelet fake-runtime serve`).
func (r *Runtime) Serve(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	r.mu.Lock()
	if r.served {
		r.mu.Unlock()
		return errors.New("fake runtime: Serve may be called only once")
	}
	r.served = true
	r.logger = logger
	r.mu.Unlock()
	if r.mux != nil {
		return r.serveMuxed(ctx) // one of many nodes' runtimes: its CRI calls come through the Mux
	}

	criListener, err := listenUnix(r.cfg.Socket)
	if err != nil {
		return err
	}
	defer criListener.Close() // closing a unix listener removes its socket file
	adminListener, err := listenUnix(r.cfg.AdminSocket)
	if err != nil {
		return err
	}
	defer adminListener.Close()
	// Streaming sessions end when streamCtx does: on ctx cancel, or when a server fails.
	streamCtx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	streamServer, streamListener, err := r.newStreamServer(streamCtx)
	if err != nil {
		return err
	}

	grpcServer := grpc.NewServer(
		grpc.MaxRecvMsgSize(maxMsgSize),
		grpc.MaxSendMsgSize(maxMsgSize),
		grpc.ChainUnaryInterceptor(r.unaryInterceptor(logger)),
		grpc.ChainStreamInterceptor(r.streamInterceptor(logger)),
	)
	runtimeapi.RegisterRuntimeServiceServer(grpcServer, r)
	runtimeapi.RegisterImageServiceServer(grpcServer, r)
	adminServer := &http.Server{
		Handler:           r.adminHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}

	serveErr := make(chan error, 3)
	go func() { serveErr <- grpcServer.Serve(criListener) }()
	go func() { serveErr <- adminServer.Serve(adminListener) }()
	go func() { serveErr <- streamServer.Serve(streamListener) }()
	close(r.ready)
	logger.Info("Fake container runtime serving", "endpoint", r.Endpoint(), "adminSocket", r.cfg.AdminSocket, "streamingURL", r.StreamingURL())

	var result error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, grpc.ErrServerStopped) {
			result = fmt.Errorf("fake runtime: serve: %w", err)
		}
	}

	logger.Info("Fake container runtime stopping")
	r.shutdown()
	_ = adminServer.Close()
	_ = streamServer.Close()  // the listener and plain HTTP connections
	stopStreams()             // exec and attach sessions return
	r.sessions.closeAndWait() // the hijacked connections of all sessions, port-forward included
	stopped := make(chan struct{})
	go func() { grpcServer.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-r.clock.After(shutdownGrace):
		grpcServer.Stop()
		<-stopped
	}
	r.wg.Wait()
	return result
}

// shutdown closes event streams (so GracefulStop does not wait for them forever) and stops
// program timers and servers.
func (r *Runtime) shutdown() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.stopBackground()
	for ch := range r.events {
		r.events.unsubscribe(ch)
	}
	for _, c := range r.containers {
		r.stopTimerLocked(c)
		r.stopServersLocked(c)
	}
}

// checkSocketPath refuses a unix socket path longer than the kernel takes.
func checkSocketPath(p string) error {
	if len(p) > maxUnixSocketPath {
		return fmt.Errorf("fake runtime: socket path %q is %d bytes but unix sockets allow %d: use a shorter directory", p, len(p), maxUnixSocketPath)
	}
	return nil
}

// listenUnix listens on path, replacing a stale socket file left by a crashed process.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("fake runtime: create directory for socket %q: %w", path, err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("fake runtime: %q exists and is not a socket: remove it or choose another path", path)
		}
		if conn, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = conn.Close()
			return nil, fmt.Errorf("fake runtime: another process is serving on %q: stop it first", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("fake runtime: remove stale socket %q: %w", path, err)
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("fake runtime: listen on %q: %w", path, err)
	}
	return l, nil
}

// unaryInterceptor logs every CRI call at V(4) and applies injected latency.
func (r *Runtime) unaryInterceptor(logger klog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		method := path.Base(info.FullMethod) // "/runtime.v1.RuntimeService/ListContainers" → "ListContainers"
		if err := r.injectLatency(ctx, method); err != nil {
			return nil, err
		}
		resp, err := handler(klog.NewContext(ctx, logger), req)
		logger.V(4).Info("CRI call", "method", method, "err", err)
		return resp, err
	}
}

// streamInterceptor does for streams what unaryInterceptor does for unary calls.
func (r *Runtime) streamInterceptor(logger klog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		method := path.Base(info.FullMethod)
		if err := r.injectLatency(ss.Context(), method); err != nil {
			return err
		}
		logger.V(4).Info("CRI stream", "method", method)
		return handler(srv, ss)
	}
}

package fakeruntime

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/klog/v2"
)

// The streaming calls Exec, Attach and PortForward answer with a one-time URL on the streaming
// server; the session then runs in the streamer (exec.go). doc.go's "Streaming" tells the story.

// validateStreamingAddr accepts only loopback host:port addresses: the streaming server has no
// authentication beyond its one-time tokens, so it must not be reachable from other machines.
func validateStreamingAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fake runtime: Config.StreamingAddr %q must be host:port, like %s: %w", addr, DefaultStreamingAddr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("fake runtime: Config.StreamingAddr %q has a bad port: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("fake runtime: Config.StreamingAddr %q is not a loopback address: the streaming server speaks plain HTTP without authentication, so listen on 127.0.0.1 or [::1]", addr)
	}
	return nil
}

// newStreamServer listens on Config.StreamingAddr and builds the HTTP server for streaming
// sessions. It records the streaming.Server (which hands out URLs) and the base URL for the CRI
// calls. Request contexts derive from ctx, so cancelling it ends every session.
func (r *Runtime) newStreamServer(ctx context.Context) (*http.Server, net.Listener, error) {
	l, err := net.Listen("tcp", r.cfg.StreamingAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("fake runtime: listen for streaming on %q: %w", r.cfg.StreamingAddr, err)
	}
	// With port 0 only the listener knows the port, so the URLs are built from its address.
	base := &url.URL{Scheme: "http", Host: l.Addr().String()}
	cfg := streaming.DefaultConfig
	cfg.Addr = l.Addr().String()
	cfg.BaseURL = base
	streams, err := streaming.NewServer(cfg, &streamer{r: r})
	if err != nil {
		_ = l.Close()
		return nil, nil, fmt.Errorf("fake runtime: create streaming server: %w", err)
	}
	r.mu.Lock()
	r.streams = streams
	r.streamURL = base.String()
	r.mu.Unlock()
	srv := &http.Server{
		Handler:           r.sessions.track(streams),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// Remember each request's connection, so streamSessions can close it even after the
		// streaming library has hijacked it.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
	}
	return srv, l, nil
}

// StreamingURL is the base URL of the streaming server, like "http://127.0.0.1:41234", once
// Ready is closed; "" before. The URLs that Exec, Attach and PortForward return start with it.
func (r *Runtime) StreamingURL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.streamURL
}

// streamServerLocked returns the streaming server, or Unavailable before Serve has started it.
func (r *Runtime) streamServerLocked() (streaming.Server, error) {
	if r.streams == nil {
		return nil, status.Error(codes.Unavailable, "the streaming server is not running: call Serve first")
	}
	return r.streams, nil
}

// Exec returns a one-time URL on the streaming server where cmd runs "inside" a RUNNING container
// with the program grammar, interactively (streamer.Exec). Nothing runs on the host.
func (r *Runtime) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	if len(req.GetCmd()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "cmd is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.runningContainerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	streams, err := r.streamServerLocked()
	if err != nil {
		return nil, err
	}
	req = proto.Clone(req).(*runtimeapi.ExecRequest)
	req.ContainerId = c.id // a prefix could name another container by the time the URL is used
	klog.FromContext(ctx).V(4).Info("Exec", "containerID", c.id, "cmd", req.GetCmd(), "tty", req.GetTty())
	return streams.GetExec(req)
}

// Attach returns a one-time URL on the streaming server where the output a RUNNING container
// writes from then on is streamed (streamer.Attach).
func (r *Runtime) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.runningContainerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	streams, err := r.streamServerLocked()
	if err != nil {
		return nil, err
	}
	req = proto.Clone(req).(*runtimeapi.AttachRequest)
	req.ContainerId = c.id
	klog.FromContext(ctx).V(4).Info("Attach", "containerID", c.id, "tty", req.GetTty())
	return streams.GetAttach(req)
}

// PortForward returns a one-time URL on the streaming server through which connections reach a
// READY sandbox's ports; every port is an echo server (streamer.PortForward).
func (r *Runtime) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	for _, p := range req.GetPort() {
		if err := validatePort(p); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.readySandboxLocked(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	streams, err := r.streamServerLocked()
	if err != nil {
		return nil, err
	}
	req = proto.Clone(req).(*runtimeapi.PortForwardRequest)
	req.PodSandboxId = s.id
	klog.FromContext(ctx).V(4).Info("PortForward", "podSandboxID", s.id, "ports", req.GetPort())
	return streams.GetPortForward(req)
}

// readySandboxLocked finds a sandbox by ID or prefix and requires it to be READY.
func (r *Runtime) readySandboxLocked(id string) (*sandbox, error) {
	s, err := r.sandboxLocked(id)
	if err != nil {
		return nil, err
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %q is %s, not READY: ports of a stopped pod cannot be forwarded", s.id, s.state)
	}
	return s, nil
}

// validatePort accepts TCP ports 1–65535.
func validatePort(port int32) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("port %d is out of range: ports are 1-65535", port)
	}
	return nil
}

// connKey is the request-context key of the connection a request arrived on.
type connKey struct{}

// streamSessions tracks the streaming sessions in flight. http.Server.Close does not close
// connections that were hijacked (SPDY and WebSocket both hijack), so on shutdown Serve closes
// them here and waits until every session has returned.
type streamSessions struct {
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]int // open connections, with the number of sessions on each
	wg     sync.WaitGroup   // sessions in flight
}

// begin registers a session on conn (nil when there is no connection of its own). It returns
// false once closeAndWait has started: the session must not run.
func (s *streamSessions) begin(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	if conn != nil {
		s.conns[conn]++
	}
	return true
}

// end is called once for every begin that returned true.
func (s *streamSessions) end(conn net.Conn) {
	s.mu.Lock()
	if conn != nil {
		if s.conns[conn]--; s.conns[conn] <= 0 {
			delete(s.conns, conn)
		}
	}
	s.mu.Unlock()
	s.wg.Done()
}

// track wraps the streaming server's handler so that every request is a tracked session.
func (s *streamSessions) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		conn, _ := req.Context().Value(connKey{}).(net.Conn)
		if !s.begin(conn) {
			http.Error(w, "the fake runtime is shutting down", http.StatusServiceUnavailable)
			return
		}
		defer s.end(conn)
		next.ServeHTTP(w, req)
	})
}

// closeAndWait refuses new sessions, closes the connections of open ones and waits until they
// have all returned.
func (s *streamSessions) closeAndWait() {
	s.mu.Lock()
	s.closed = true
	for conn := range s.conns {
		_ = conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

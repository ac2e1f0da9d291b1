package exectest

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/exec"
)

// The paths of the URLs Runtime answers, under Runtime.URL.
const (
	ExecPath        = "/exec/token-1"
	AttachPath      = "/attach/token-2"
	PortForwardPath = "/portforward/token-3"
)

// Runtime is an exec.Runtime that answers every call with a URL under URL (or with Err) and
// records the requests. Set URL and Err before the first call.
type Runtime struct {
	// URL is the base of the streaming URLs, e.g. a StreamingServer's URL.
	URL string
	// Err, if set, is returned by every call instead of a URL.
	Err error

	mu          sync.Mutex
	exec        []*runtimeapi.ExecRequest
	attach      []*runtimeapi.AttachRequest
	portForward []*runtimeapi.PortForwardRequest
}

var _ exec.Runtime = (*Runtime)(nil)

func (f *Runtime) Exec(_ context.Context, in *runtimeapi.ExecRequest, _ ...grpc.CallOption) (*runtimeapi.ExecResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exec = append(f.exec, in)
	if f.Err != nil {
		return nil, f.Err
	}
	return &runtimeapi.ExecResponse{Url: f.URL + ExecPath}, nil
}

func (f *Runtime) Attach(_ context.Context, in *runtimeapi.AttachRequest, _ ...grpc.CallOption) (*runtimeapi.AttachResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attach = append(f.attach, in)
	if f.Err != nil {
		return nil, f.Err
	}
	return &runtimeapi.AttachResponse{Url: f.URL + AttachPath}, nil
}

func (f *Runtime) PortForward(_ context.Context, in *runtimeapi.PortForwardRequest, _ ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.portForward = append(f.portForward, in)
	if f.Err != nil {
		return nil, f.Err
	}
	return &runtimeapi.PortForwardResponse{Url: f.URL + PortForwardPath}, nil
}

// ExecRequests, AttachRequests and PortForwardRequests return the requests received so far.
func (f *Runtime) ExecRequests() []*runtimeapi.ExecRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*runtimeapi.ExecRequest(nil), f.exec...)
}

func (f *Runtime) AttachRequests() []*runtimeapi.AttachRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*runtimeapi.AttachRequest(nil), f.attach...)
}

func (f *Runtime) PortForwardRequests() []*runtimeapi.PortForwardRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*runtimeapi.PortForwardRequest(nil), f.portForward...)
}

// StreamingServer stands in for the runtime's streaming server: it accepts an upgrade to
// SPDY/3.1 with 101 Switching Protocols (as the real one does), records the request, and then
// echoes every byte back over the hijacked connection until the client closes it.
type StreamingServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

// NewStreamingServer starts a StreamingServer on loopback; the test's cleanup closes it.
func NewStreamingServer(t *testing.T) *StreamingServer {
	t.Helper()
	f := &StreamingServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r.Clone(r.Context()))
		f.mu.Unlock()
		if !strings.EqualFold(r.Header.Get("Upgrade"), "SPDY/3.1") {
			http.Error(w, "want an upgrade to SPDY/3.1", http.StatusBadRequest)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer func() { _ = conn.Close() }()
		_, _ = buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
		_ = buf.Flush()
		_, _ = io.Copy(conn, buf) // echo until the client closes
	}))
	t.Cleanup(f.Close)
	return f
}

// Requests returns the requests received so far.
func (f *StreamingServer) Requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.reqs...)
}

// Upgrade sends an SPDY upgrade request for path to addr (with the stream protocol
// v4.channel.k8s.io) and returns the connection, a reader over it, and the response. After a
// 101 the connection carries raw bytes. The test's cleanup closes the connection.
func Upgrade(t *testing.T, addr, method, path string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	req, err := http.NewRequest(method, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	req.Header.Set("X-Stream-Protocol-Version", "v4.channel.k8s.io")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatalf("read upgrade response: %v", err)
	}
	return conn, br, resp
}

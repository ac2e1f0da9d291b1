package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntimeStreamServer stands in for the runtime's streaming server: it accepts one upgrade
// per request with 101 Switching Protocols (as the SPDY streaming server does), records the
// request, and then echoes every byte back over the hijacked connection.
type fakeRuntimeStreamServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newFakeRuntimeStreamServer(t *testing.T) *fakeRuntimeStreamServer {
	t.Helper()
	f := &fakeRuntimeStreamServer{}
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

func (f *fakeRuntimeStreamServer) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.reqs...)
}

// upgrade sends an SPDY upgrade request for path to addr, checks the 101, and returns the
// connection, ready for raw bytes.
func upgrade(t *testing.T, addr, method, path string) (net.Conn, *bufio.Reader, *http.Response) {
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

// Pins upstream's getExec/proxyStream: the container is resolved, CRI Exec gets the command and
// stream flags, and the upgraded connection is proxied to the runtime's streaming URL, both ways.
func TestExecProxiesToStreamingURL(t *testing.T) {
	runtimeSrv := newFakeRuntimeStreamServer(t)
	streaming := &fakeStreaming{streamURL: runtimeSrv.URL}
	s, err := New(openConfig(t, &fakeHost{}, streaming))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	conn, br, resp := upgrade(t, srv.Listener.Addr().String(), http.MethodPost,
		"/exec/default/web/uid-1/app?command=sh&command=-c&command=date&input=1&output=1&error=1&tty=1")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got %s, want 101 Switching Protocols from the runtime", resp.Status)
	}

	// Bytes go to the runtime and come back: the connection is spliced, not just answered.
	if _, err := conn.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if echo, err := br.ReadString('\n'); err != nil || echo != "ping\n" {
		t.Fatalf("echo = %q, %v; want ping through the proxy", echo, err)
	}

	streaming.mu.Lock()
	got := streaming.execReq
	streaming.mu.Unlock()
	want := &runtimeapi.ExecRequest{ContainerId: "ctr-app", Cmd: []string{"sh", "-c", "date"}, Stdin: true, Stdout: true, Stderr: false, Tty: true}
	if got == nil || got.ContainerId != want.ContainerId || !reflect.DeepEqual(got.Cmd, want.Cmd) ||
		got.Stdin != want.Stdin || got.Stdout != want.Stdout || got.Stderr != want.Stderr || got.Tty != want.Tty {
		t.Errorf("ExecRequest = %v, want %v (a TTY drops stderr)", got, want)
	}
	reqs := runtimeSrv.requests()
	if len(reqs) != 1 || reqs[0].URL.Path != "/exec/token-1" || reqs[0].Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
		t.Errorf("runtime got %d requests (first %v), want one for /exec/token-1 with the client's headers", len(reqs), reqs)
	}
}

// Pins port-forward: the sandbox (not a container) is resolved and the upgrade proxied.
func TestPortForwardProxiesToStreamingURL(t *testing.T) {
	runtimeSrv := newFakeRuntimeStreamServer(t)
	streaming := &fakeStreaming{streamURL: runtimeSrv.URL}
	s, err := New(openConfig(t, &fakeHost{}, streaming))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	_, _, resp := upgrade(t, srv.Listener.Addr().String(), http.MethodGet, "/portForward/default/web")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got %s, want 101", resp.Status)
	}
	streaming.mu.Lock()
	defer streaming.mu.Unlock()
	if streaming.pfReq == nil || streaming.pfReq.PodSandboxId != "sandbox-web" {
		t.Errorf("PortForwardRequest = %v, want sandbox-web", streaming.pfReq)
	}
	if reqs := runtimeSrv.requests(); len(reqs) != 1 || reqs[0].URL.Path != "/portforward/token-3" {
		t.Errorf("runtime requests = %v, want one for /portforward/token-3", reqs)
	}
}

// Pins the error answers of the streaming endpoints.
func TestStreamingErrors(t *testing.T) {
	runtimeSrv := newFakeRuntimeStreamServer(t)
	s, err := New(openConfig(t, &fakeHost{}, &fakeStreaming{streamURL: runtimeSrv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, path string
		want               int
	}{
		{"no stream requested", http.MethodPost, "/exec/default/web/app?command=ls", http.StatusBadRequest},
		{"unknown container", http.MethodPost, "/exec/default/web/nope?command=ls&output=1", http.StatusNotFound},
		{"wrong pod UID", http.MethodPost, "/attach/default/web/uid-2/app?output=1", http.StatusNotFound},
		{"unknown pod for port-forward", http.MethodPost, "/portForward/default/nope", http.StatusNotFound},
		{"exec without an upgrade", http.MethodPost, "/exec/default/web/app?command=ls&output=1", http.StatusBadRequest},
		{"PUT is not a route", http.MethodPut, "/exec/default/web/app?command=ls&output=1", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.want {
				t.Errorf("got %d %q, want %d", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
}

// Pins /run: the "cmd" parameter split on spaces goes to CRI ExecSync, and the answer is stdout
// followed by stderr; a non-zero exit is 500.
func TestRun(t *testing.T) {
	streaming := &fakeStreaming{syncResp: &runtimeapi.ExecSyncResponse{Stdout: []byte("hello\n"), Stderr: []byte("warn\n")}}
	s, err := New(openConfig(t, &fakeHost{}, streaming))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app?cmd=echo+hello", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "hello\nwarn\n" {
		t.Errorf("got %d %q, want 200 with stdout then stderr", rec.Code, rec.Body.String())
	}
	streaming.mu.Lock()
	if len(streaming.syncReqs) != 1 || streaming.syncReqs[0].ContainerId != "ctr-app" ||
		!reflect.DeepEqual(streaming.syncReqs[0].Cmd, []string{"echo", "hello"}) {
		t.Errorf("ExecSync requests = %v, want [echo hello] in ctr-app", streaming.syncReqs)
	}
	streaming.syncResp = &runtimeapi.ExecSyncResponse{ExitCode: 3}
	streaming.mu.Unlock()

	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app?cmd=false", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "exit code: 3") {
		t.Errorf("non-zero exit: got %d %q, want 500 naming exit code 3", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app", nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("no cmd: got %d, want 400", rec.Code)
	}
}

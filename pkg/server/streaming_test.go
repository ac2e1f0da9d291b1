package server

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/testing/exectest"
)

// newStreamingServer is a Server (anonymous, allow-all) over the fake host and a fake runtime
// whose streaming URLs point at a fake streaming server, served on loopback.
func newStreamingServer(t *testing.T) (addr string, streaming *fakeStreaming, runtimeSrv *exectest.StreamingServer) {
	t.Helper()
	runtimeSrv = exectest.NewStreamingServer(t)
	streaming = &fakeStreaming{Runtime: exectest.Runtime{URL: runtimeSrv.URL}}
	s, err := New(openConfig(t, &fakeHost{}, streaming))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.handler)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), streaming, runtimeSrv
}

// Pins upstream's getExec end to end through the routes: the container is resolved, CRI Exec
// gets the command and stream flags from the query, and the upgraded connection is proxied to
// the runtime's streaming URL, both ways.
func TestExecProxiesToStreamingURL(t *testing.T) {
	addr, streaming, runtimeSrv := newStreamingServer(t)

	conn, br, resp := exectest.Upgrade(t, addr, http.MethodPost,
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

	want := &runtimeapi.ExecRequest{ContainerId: "ctr-app", Cmd: []string{"sh", "-c", "date"}, Stdin: true, Stdout: true, Stderr: false, Tty: true}
	got := streaming.ExecRequests()
	if len(got) != 1 || got[0].ContainerId != want.ContainerId || !reflect.DeepEqual(got[0].Cmd, want.Cmd) ||
		got[0].Stdin != want.Stdin || got[0].Stdout != want.Stdout || got[0].Stderr != want.Stderr || got[0].Tty != want.Tty {
		t.Errorf("ExecRequests = %v, want [%v] (a TTY drops stderr)", got, want)
	}
	reqs := runtimeSrv.Requests()
	if len(reqs) != 1 || reqs[0].URL.Path != exectest.ExecPath || reqs[0].Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
		t.Errorf("runtime got %d requests (first %v), want one for %s with the client's headers", len(reqs), reqs, exectest.ExecPath)
	}
}

// Pins port-forward: the sandbox (not a container) is resolved and the upgrade proxied.
func TestPortForwardProxiesToStreamingURL(t *testing.T) {
	addr, streaming, runtimeSrv := newStreamingServer(t)

	_, _, resp := exectest.Upgrade(t, addr, http.MethodGet, "/portForward/default/web")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got %s, want 101", resp.Status)
	}
	if got := streaming.PortForwardRequests(); len(got) != 1 || got[0].PodSandboxId != "sandbox-web" {
		t.Errorf("PortForwardRequests = %v, want one for sandbox-web", got)
	}
	if reqs := runtimeSrv.Requests(); len(reqs) != 1 || reqs[0].URL.Path != exectest.PortForwardPath {
		t.Errorf("runtime requests = %v, want one for %s", reqs, exectest.PortForwardPath)
	}
}

// Pins the routes of upstream's InstallAuthRequiredHandlers for streams: GET and POST, with and
// without the pod UID, each reach its CRI call with the resolved ID and are proxied.
func TestStreamingRoutes(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		// resolved returns the ID the CRI call got, and how many calls of that kind were made.
		resolved            func(*fakeStreaming) (id string, calls int)
		wantID, runtimePath string
	}{
		{http.MethodPost, "/exec/default/web/app?command=ls&output=1", execID, "ctr-app", exectest.ExecPath},
		{http.MethodGet, "/exec/default/web/uid-1/app?command=ls&output=1", execID, "ctr-app", exectest.ExecPath},
		{http.MethodGet, "/attach/default/web/app?output=1", attachID, "ctr-app", exectest.AttachPath},
		{http.MethodPost, "/attach/default/web/uid-1/app?input=1&tty=1", attachID, "ctr-app", exectest.AttachPath},
		{http.MethodPost, "/portForward/default/web", portForwardID, "sandbox-web", exectest.PortForwardPath},
		{http.MethodGet, "/portForward/default/web/uid-1", portForwardID, "sandbox-web", exectest.PortForwardPath},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			addr, streaming, runtimeSrv := newStreamingServer(t)
			_, _, resp := exectest.Upgrade(t, addr, tc.method, tc.path)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("got %s, want 101", resp.Status)
			}
			if id, calls := tc.resolved(streaming); calls != 1 || id != tc.wantID {
				t.Errorf("CRI call got ID %q (%d calls), want one call for %q", id, calls, tc.wantID)
			}
			if reqs := runtimeSrv.Requests(); len(reqs) != 1 || reqs[0].URL.Path != tc.runtimePath || reqs[0].Method != tc.method {
				t.Errorf("runtime requests = %v, want one %s %s", reqs, tc.method, tc.runtimePath)
			}
		})
	}
}

func execID(f *fakeStreaming) (string, int) {
	reqs := f.ExecRequests()
	if len(reqs) == 0 {
		return "", 0
	}
	return reqs[0].ContainerId, len(reqs)
}

func attachID(f *fakeStreaming) (string, int) {
	reqs := f.AttachRequests()
	if len(reqs) == 0 {
		return "", 0
	}
	return reqs[0].ContainerId, len(reqs)
}

func portForwardID(f *fakeStreaming) (string, int) {
	reqs := f.PortForwardRequests()
	if len(reqs) == 0 {
		return "", 0
	}
	return reqs[0].PodSandboxId, len(reqs)
}

// Pins the error answers of the streaming endpoints: bad options (400) come before the lookup,
// a missing pod or container is 404, a request without an upgrade 400, a CRI refusal keeps its
// code, and only GET and POST are routes.
func TestStreamingErrors(t *testing.T) {
	runtimeSrv := exectest.NewStreamingServer(t)
	for _, tc := range []struct {
		name, method, path string
		runtimeErr         error
		want               int
	}{
		{"no stream requested", http.MethodPost, "/exec/default/web/app?command=ls", nil, http.StatusBadRequest},
		{"no stream requested, unknown container", http.MethodPost, "/exec/default/web/nope?command=ls", nil, http.StatusBadRequest},
		{"unknown container", http.MethodPost, "/exec/default/web/nope?command=ls&output=1", nil, http.StatusNotFound},
		{"wrong pod UID", http.MethodPost, "/attach/default/web/uid-2/app?output=1", nil, http.StatusNotFound},
		{"unknown pod for port-forward", http.MethodPost, "/portForward/default/nope", nil, http.StatusNotFound},
		{"exec without an upgrade", http.MethodPost, "/exec/default/web/app?command=ls&output=1", nil, http.StatusBadRequest},
		{"runtime refuses exec", http.MethodPost, "/exec/default/web/app?command=ls&output=1", grpcstatus.Error(codes.NotFound, "gone"), http.StatusNotFound},
		{"runtime busy for port-forward", http.MethodPost, "/portForward/default/web", grpcstatus.Error(codes.ResourceExhausted, "busy"), http.StatusTooManyRequests},
		{"PUT is not a route", http.MethodPut, "/exec/default/web/app?command=ls&output=1", nil, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streaming := &fakeStreaming{Runtime: exectest.Runtime{URL: runtimeSrv.URL, Err: tc.runtimeErr}}
			s, err := New(openConfig(t, &fakeHost{}, streaming))
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			s.handler.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.want {
				t.Errorf("got %d %q, want %d", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
	if reqs := runtimeSrv.Requests(); len(reqs) != 0 {
		t.Errorf("the runtime got %d requests, want none for requests that fail", len(reqs))
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
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app?cmd=echo+hello", nil))
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
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app?cmd=false", nil))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "exit code: 3") {
		t.Errorf("non-zero exit: got %d %q, want 500 naming exit code 3", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/run/default/web/app", nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("no cmd: got %d, want 400", rec.Code)
	}
}

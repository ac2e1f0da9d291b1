package exec_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/exec"
	"github.com/minikubelet/minikubelet/testing/exectest"
)

// Pins upstream remotecommand.NewOptions: only "1" turns a stream on, a TTY drops stderr (it is
// merged into stdout), and a session without any stream is refused.
func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		query   string
		want    exec.Options
		wantErr bool
	}{
		{"all streams", "input=1&output=1&error=1", exec.Options{Stdin: true, Stdout: true, Stderr: true}, false},
		{"a TTY drops stderr", "input=1&output=1&error=1&tty=1", exec.Options{Stdin: true, Stdout: true, TTY: true}, false},
		{"stdout only", "output=1", exec.Options{Stdout: true}, false},
		{"only 1 means on", "input=true&output=yes&error=0", exec.Options{}, true},
		{"no stream", "tty=1", exec.Options{TTY: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			query, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := exec.ParseOptions(query)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseOptions(%q) error = %v, want error %v", tc.query, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseOptions(%q) = %+v, want %+v", tc.query, got, tc.want)
			}
		})
	}
}

// serve starts a server whose every request is handled by handle, as pkg/server's routes do
// after resolving the target.
func serve(t *testing.T, handle http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handle)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// Pins upstream's getExec after the lookup: CRI Exec gets the container, command and streams,
// and the upgraded connection is proxied to the runtime's streaming URL, both ways, with the
// client's headers.
func TestExecProxiesToStreamingURL(t *testing.T) {
	runtimeSrv := exectest.NewStreamingServer(t)
	runtime := &exectest.Runtime{URL: runtimeSrv.URL}
	p := exec.NewProxy(runtime)
	opts := exec.Options{Stdin: true, Stdout: true, TTY: true}
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		p.Exec(w, r, "ctr-app", []string{"sh", "-c", "date"}, opts)
	})

	conn, br, resp := exectest.Upgrade(t, addr, http.MethodPost, "/exec/default/web/app")
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
	if got := runtime.ExecRequests(); len(got) != 1 || got[0].ContainerId != want.ContainerId || !reflect.DeepEqual(got[0].Cmd, want.Cmd) ||
		got[0].Stdin != want.Stdin || got[0].Stdout != want.Stdout || got[0].Stderr != want.Stderr || got[0].Tty != want.Tty {
		t.Errorf("ExecRequests = %v, want [%v]", got, want)
	}
	reqs := runtimeSrv.Requests()
	if len(reqs) != 1 || reqs[0].URL.Path != exectest.ExecPath || reqs[0].Header.Get("X-Stream-Protocol-Version") != "v4.channel.k8s.io" {
		t.Errorf("runtime got %d requests (first %v), want one for %s with the client's headers", len(reqs), reqs, exectest.ExecPath)
	}
}

// Pins attach: CRI Attach gets the container and streams (no command), and the upgrade is
// proxied to its URL.
func TestAttachProxiesToStreamingURL(t *testing.T) {
	runtimeSrv := exectest.NewStreamingServer(t)
	runtime := &exectest.Runtime{URL: runtimeSrv.URL}
	p := exec.NewProxy(runtime)
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) {
		p.Attach(w, r, "ctr-app", exec.Options{Stdout: true, Stderr: true})
	})

	_, _, resp := exectest.Upgrade(t, addr, http.MethodGet, "/attach/default/web/app")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got %s, want 101", resp.Status)
	}
	if got := runtime.AttachRequests(); len(got) != 1 || got[0].ContainerId != "ctr-app" ||
		got[0].Stdin || !got[0].Stdout || !got[0].Stderr || got[0].Tty {
		t.Errorf("AttachRequests = %v, want one for ctr-app with stdout and stderr only", got)
	}
	if reqs := runtimeSrv.Requests(); len(reqs) != 1 || reqs[0].URL.Path != exectest.AttachPath {
		t.Errorf("runtime requests = %v, want one for %s", reqs, exectest.AttachPath)
	}
}

// Pins port-forward: CRI PortForward names the sandbox and no ports, and the upgraded connection
// is proxied both ways.
func TestPortForwardProxiesToStreamingURL(t *testing.T) {
	runtimeSrv := exectest.NewStreamingServer(t)
	runtime := &exectest.Runtime{URL: runtimeSrv.URL}
	p := exec.NewProxy(runtime)
	addr := serve(t, func(w http.ResponseWriter, r *http.Request) { p.PortForward(w, r, "sandbox-web") })

	conn, br, resp := exectest.Upgrade(t, addr, http.MethodGet, "/portForward/default/web")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("got %s, want 101", resp.Status)
	}
	if _, err := conn.Write([]byte("pong\n")); err != nil {
		t.Fatal(err)
	}
	if echo, err := br.ReadString('\n'); err != nil || echo != "pong\n" {
		t.Fatalf("echo = %q, %v; want pong through the proxy", echo, err)
	}
	if got := runtime.PortForwardRequests(); len(got) != 1 || got[0].PodSandboxId != "sandbox-web" || len(got[0].Port) != 0 {
		t.Errorf("PortForwardRequests = %v, want one for sandbox-web without ports", got)
	}
	if reqs := runtimeSrv.Requests(); len(reqs) != 1 || reqs[0].URL.Path != exectest.PortForwardPath {
		t.Errorf("runtime requests = %v, want one for %s", reqs, exectest.PortForwardPath)
	}
}

// Pins the status codes a client sees when the runtime refuses, answers nonsense, or cannot be
// reached, and when the client does not ask for an upgrade.
func TestErrors(t *testing.T) {
	runtimeSrv := exectest.NewStreamingServer(t)
	// An address nobody listens on: opened, then closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String()
	_ = ln.Close()

	for _, tc := range []struct {
		name      string
		runtime   *exectest.Runtime
		noUpgrade bool
		want      int
		wantBody  string
	}{
		{"no upgrade requested", &exectest.Runtime{URL: runtimeSrv.URL}, true, http.StatusBadRequest, "Upgrade request required"},
		{"CRI NotFound", &exectest.Runtime{Err: grpcstatus.Error(codes.NotFound, "container not found")}, false, http.StatusNotFound, "container not found"},
		{"CRI InvalidArgument", &exectest.Runtime{Err: grpcstatus.Error(codes.InvalidArgument, "bad command")}, false, http.StatusBadRequest, "bad command"},
		{"CRI FailedPrecondition", &exectest.Runtime{Err: grpcstatus.Error(codes.FailedPrecondition, "not running")}, false, http.StatusBadRequest, "not running"},
		{"CRI ResourceExhausted", &exectest.Runtime{Err: grpcstatus.Error(codes.ResourceExhausted, "too many streams")}, false, http.StatusTooManyRequests, "too many streams"},
		{"CRI Unavailable", &exectest.Runtime{Err: grpcstatus.Error(codes.Unavailable, "runtime down")}, false, http.StatusInternalServerError, "runtime down"},
		{"URL without a host", &exectest.Runtime{URL: ""}, false, http.StatusInternalServerError, "unusable streaming URL"},
		{"runtime not listening", &exectest.Runtime{URL: deadURL}, false, http.StatusInternalServerError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := exec.NewProxy(tc.runtime)
			out := exec.Options{Stdout: true}
			for _, c := range []struct {
				name string
				call func(http.ResponseWriter, *http.Request)
			}{
				{"exec", func(w http.ResponseWriter, r *http.Request) { p.Exec(w, r, "ctr-app", []string{"ls"}, out) }},
				{"attach", func(w http.ResponseWriter, r *http.Request) { p.Attach(w, r, "ctr-app", out) }},
				{"port-forward", func(w http.ResponseWriter, r *http.Request) { p.PortForward(w, r, "sandbox-web") }},
			} {
				r := httptest.NewRequest(http.MethodPost, "/", nil)
				if !tc.noUpgrade {
					r.Header.Set("Connection", "Upgrade")
					r.Header.Set("Upgrade", "SPDY/3.1")
				}
				rec := httptest.NewRecorder()
				c.call(rec, r)
				if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantBody) {
					t.Errorf("%s: got %d %q, want %d containing %q", c.name, rec.Code, rec.Body.String(), tc.want, tc.wantBody)
				}
			}
		})
	}
	if reqs := runtimeSrv.Requests(); len(reqs) != 0 {
		t.Errorf("the runtime got %d requests, want none: a request without an upgrade is not proxied", len(reqs))
	}
}

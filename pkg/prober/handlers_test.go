package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Upstream pkg/probe/exec and the CRI client's timeout: exit 0 is success, anything else a
// failure with stdout+stderr (at most 10 KiB) as the message; a command that timed out is a
// failure "command timed out: …"; any other error means the probe could not run.
func TestExecProbe(t *testing.T) {
	long := strings.Repeat("x", 11<<10)
	tests := []struct {
		name       string
		reply      execReply
		want       outcome
		wantOutput string
		wantErr    bool
	}{
		{name: "exit 0", reply: execReply{stdout: []byte("fine")}, want: outcomeSuccess, wantOutput: "fine"},
		{name: "exit 1: stdout then stderr", reply: execReply{stdout: []byte("out "), stderr: []byte("err"), exitCode: 1}, want: outcomeFailure, wantOutput: "out err"},
		{name: "output cut at 10 KiB", reply: execReply{stdout: []byte(long), exitCode: 1}, want: outcomeFailure, wantOutput: long[:10<<10]},
		{name: "CRI DeadlineExceeded", reply: execReply{err: status.Error(codes.DeadlineExceeded, "deadline")}, want: outcomeFailure,
			wantOutput: `command timed out: "sh -c sleep 5" timed out after 1s`},
		{name: "context deadline", reply: execReply{err: fmt.Errorf("exec: %w", context.DeadlineExceeded)}, want: outcomeFailure,
			wantOutput: `command timed out: "sh -c sleep 5" timed out after 1s`},
		{name: "runtime error", reply: execReply{err: errors.New("no such container")}, want: outcomeUnknown, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeExec{reply: tc.reply}
			f.clock = newTestEnv(t).clock
			got, output, err := execProbe(context.Background(), f, "abc", []string{"sh", "-c", "sleep 5"}, time.Second)
			if got != tc.want || output != tc.wantOutput || (err != nil) != tc.wantErr {
				t.Errorf("execProbe = %s, %q, %v; want %s, %q, error %v", got, output, err, tc.want, tc.wantOutput, tc.wantErr)
			}
		})
	}
}

// Upstream ExpandContainerCommandOnlyStatic: $(NAME) of the container's plain env values is
// expanded in an exec probe's command; valueFrom entries count as ""; unknown names stay.
func TestExpandCommand(t *testing.T) {
	env := []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "SECRET", ValueFrom: &corev1.EnvVarSource{}}}
	got := expandCommand([]string{"check", "--port=$(PORT)", "$(SECRET)", "$(MISSING)", "$$(PORT)", "$(PORT", "a$b"}, env)
	want := []string{"check", "--port=8080", "", "$(MISSING)", "$(PORT)", "$(PORT", "a$b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("expandCommand = %q, want %q", got, want)
	}
}

// httpEnv is a Manager whose probes target a test server on 127.0.0.1.
type httpEnv struct {
	*testEnv
	mu      sync.Mutex
	headers http.Header
	host    string
	port    int
}

func newHTTPEnv(t *testing.T, tlsServer bool) *httpEnv {
	h := &httpEnv{testEnv: newTestEnv(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.headers, h.host = r.Header.Clone(), r.Host
		h.mu.Unlock()
		_, _ = fmt.Fprint(w, "ok from "+r.URL.Path)
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "secret detail", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/here", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/", http.StatusFound) })
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Location", "http://localhost:"+strconv.Itoa(h.port)+"/") // another host name
		w.WriteHeader(http.StatusFound)
		_, _ = fmt.Fprint(w, "moved")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprint(w, strings.Repeat("y", 20<<10)) })
	srv := httptest.NewUnstartedServer(mux) // listens on 127.0.0.1
	if tlsServer {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	h.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return h
}

// probeHTTP runs an httpGet readiness probe (built by mutate) against the test server.
func (h *httpEnv) probeHTTP(mutate func(g *corev1.HTTPGetAction, c *corev1.Container)) (Result, string, error) {
	g := &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(h.port))}
	c := &corev1.Container{Name: "c", ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: g}, TimeoutSeconds: 5}}
	if mutate != nil {
		mutate(g, c)
	}
	pod := podWithProbe(Readiness, c.ReadinessProbe)
	pod.Spec.Containers[0] = *c
	status := &corev1.PodStatus{PodIP: "127.0.0.1"}
	return h.m.probe(h.ctx, Readiness, pod, status, c, testContainerID)
}

// Upstream pkg/probe/http: 200 ≤ code < 400 is a success with the body; other codes fail with
// "HTTP probe failed with statuscode: N" (no body); redirects on the same host are followed, to
// another host they stop with a warning (Event ProbeWarning, result Success); the port may be a
// container port's name; at most 10 KiB of the body is read; HTTPS does not verify.
func TestHTTPProbe(t *testing.T) {
	tests := []struct {
		name       string
		tls        bool
		mutate     func(g *corev1.HTTPGetAction, c *corev1.Container)
		want       Result
		wantOutput string
		wantEvent  string
		// outputIsPart: wantOutput and wantEvent need only be part of what the probe says.
		outputIsPart bool
	}{
		{name: "200", want: Success, wantOutput: "ok from /"},
		{name: "503", mutate: func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.Path = "/fail" },
			want: Failure, wantOutput: "HTTP probe failed with statuscode: 503",
			wantEvent: "Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 503"},
		{name: "redirect on the same host is followed", mutate: func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.Path = "/here" },
			want: Success, wantOutput: "ok from /"},
		{name: "redirect to another host is a warning", mutate: func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.Path = "/elsewhere" },
			want: Success, wantOutput: "Probe terminated redirects, Response body: moved",
			wantEvent: "Warning ProbeWarning Readiness probe warning: Probe terminated redirects, Response body: moved"},
		{name: "port by name", mutate: func(g *corev1.HTTPGetAction, c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: g.Port.IntVal}}
			g.Port, g.Path = intstr.FromString("web"), "/named"
		}, want: Success, wantOutput: "ok from /named"},
		{name: "unknown port name: errored", mutate: func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.Port = intstr.FromString("nope") },
			want:      Failure,
			wantEvent: `Warning Unhealthy Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing "nope": invalid syntax`},
		{name: "body cut at 10 KiB", mutate: func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.Path = "/big" },
			want: Success, wantOutput: strings.Repeat("y", 10<<10)},
		// minikubelet never switches TLS verification off (upstream's probes do): a certificate the
		// node does not trust fails the probe, with the TLS error as its output.
		{name: "https verifies the pod's certificate", tls: true, mutate: func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.Scheme = corev1.URISchemeHTTPS },
			want: Failure, wantOutput: "x509: certificate signed by unknown authority", outputIsPart: true,
			wantEvent: "x509: certificate signed by unknown authority"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHTTPEnv(t, tc.tls)
			got, output, _ := h.probeHTTP(tc.mutate)
			outputOK := output == tc.wantOutput || tc.outputIsPart && strings.Contains(output, tc.wantOutput)
			if got != tc.want || !outputOK {
				t.Errorf("probe = %s, %q; want %s, %q", got, output, tc.want, tc.wantOutput)
			}
			if tc.outputIsPart {
				if ev := h.recorder.all(); len(ev) != 1 || ev[0].reason != "Unhealthy" || !strings.Contains(ev[0].text, tc.wantEvent) {
					t.Errorf("events = %+v, want one Unhealthy with %q", ev, tc.wantEvent)
				}
				return
			}
			var events []string
			for _, ev := range h.recorder.all() {
				events = append(events, ev.eventType+" "+ev.reason+" "+ev.text)
			}
			if want := []string{tc.wantEvent}; tc.wantEvent == "" && len(events) != 0 || tc.wantEvent != "" && fmt.Sprint(events) != fmt.Sprint(want) {
				t.Errorf("events = %q, want %q", events, tc.wantEvent)
			}
		})
	}
}

// Upstream pkg/probe/http/request.go: User-Agent kube-probe/<major.minor> and Accept */* unless
// the probe sets them, an empty Accept removes it, a Host header sets the request's host.
func TestHTTPProbeHeaders(t *testing.T) {
	tests := []struct {
		name      string
		headers   []corev1.HTTPHeader
		wantUA    string
		wantAccpt []string
		wantHost  string
		wantOther string
	}{
		{name: "defaults", wantUA: "kube-probe/1.36", wantAccpt: []string{"*/*"}},
		{name: "probe's own", headers: []corev1.HTTPHeader{{Name: "user-agent", Value: "me"}, {Name: "Accept", Value: "text/plain"},
			{Name: "X-Check", Value: "deep"}, {Name: "Host", Value: "example.test"}},
			wantUA: "me", wantAccpt: []string{"text/plain"}, wantHost: "example.test", wantOther: "deep"},
		{name: "empty Accept removes it", headers: []corev1.HTTPHeader{{Name: "Accept", Value: ""}}, wantUA: "kube-probe/1.36"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHTTPEnv(t, false)
			if r, out, err := h.probeHTTP(func(g *corev1.HTTPGetAction, _ *corev1.Container) { g.HTTPHeaders = tc.headers }); r != Success {
				t.Fatalf("probe = %s, %q, %v", r, out, err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			wantHost := tc.wantHost
			if wantHost == "" {
				wantHost = "127.0.0.1:" + strconv.Itoa(h.port)
			}
			if got := h.headers.Get("User-Agent"); got != tc.wantUA {
				t.Errorf("User-Agent = %q, want %q", got, tc.wantUA)
			}
			if got := h.headers.Values("Accept"); fmt.Sprint(got) != fmt.Sprint(tc.wantAccpt) {
				t.Errorf("Accept = %q, want %q", got, tc.wantAccpt)
			}
			if h.host != wantHost || h.headers.Get("X-Check") != tc.wantOther {
				t.Errorf("host %q, X-Check %q; want %q, %q", h.host, h.headers.Get("X-Check"), wantHost, tc.wantOther)
			}
		})
	}
}

// Upstream http.Client{Timeout: timeoutSeconds}: a server that does not answer in time is a
// failure whose message is the client's error.
func TestHTTPProbeTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, output, err := httpProbe(newHTTPTransport(), req, 50*time.Millisecond)
	if got != outcomeFailure || err != nil || !strings.Contains(output, "Client.Timeout exceeded") {
		t.Errorf("httpProbe = %s, %q, %v; want a failure with the client's timeout", got, output, err)
	}
}

// Upstream pkg/probe/tcp: a connection that opens is a success; one refused is a failure with
// the dial error.
func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	if got, output, err := tcpProbe(context.Background(), "127.0.0.1", port, time.Second); got != outcomeSuccess || output != "" || err != nil {
		t.Errorf("open port: %s, %q, %v", got, output, err)
	}
	_ = l.Close()
	want := fmt.Sprintf("dial tcp 127.0.0.1:%d: connect: connection refused", port)
	if got, output, err := tcpProbe(context.Background(), "127.0.0.1", port, time.Second); got != outcomeFailure || output != want || err != nil {
		t.Errorf("closed port: %s, %q, %v; want failure %q", got, output, err, want)
	}
}

// Upstream pkg/probe/grpc: grpc.health.v1 Check with the probe's service; SERVING is "service
// healthy", anything else a failure in upstream's words; the User-Agent is kube-probe/1.36.
func TestGRPCProbe(t *testing.T) {
	var mu sync.Mutex
	var userAgent string
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		userAgent = strings.Join(md.Get("user-agent"), ",")
		mu.Unlock()
		return next(ctx, req)
	}))
	hs := health.NewServer()
	hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	port := serveGRPC(t, srv)
	bare := serveGRPC(t, grpc.NewServer()) // no health service

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	tests := []struct {
		name       string
		port       int
		service    string
		timeout    time.Duration
		want       outcome
		wantOutput string
	}{
		{"serving", port, "up", time.Second, outcomeSuccess, "service healthy"},
		{"whole server", port, "", time.Second, outcomeSuccess, "service healthy"},
		{"not serving", port, "down", time.Second, outcomeFailure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", port, "nope", time.Second, outcomeFailure, "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"},
		{"no health service", bare, "", time.Second, outcomeFailure,
			"error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"},
		{"nothing listening", closed, "", 200 * time.Millisecond, outcomeFailure,
			fmt.Sprintf(`timeout: failed to connect service "127.0.0.1:%d" within 200ms: context deadline exceeded`, closed)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, output, err := grpcProbe(context.Background(), "127.0.0.1", tc.service, tc.port, tc.timeout)
			if got != tc.want || output != tc.wantOutput || err != nil {
				t.Errorf("grpcProbe = %s, %q, %v; want %s, %q", got, output, err, tc.want, tc.wantOutput)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(userAgent, "kube-probe/1.36 ") {
		t.Errorf("User-Agent = %q, want kube-probe/1.36 first", userAgent)
	}
}

// Through the Manager: a grpc probe goes to the pod IP with the probe's port and service.
func TestGRPCProbeThroughManager(t *testing.T) {
	e := newTestEnv(t)
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	port := serveGRPC(t, srv)
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(port), Service: ptr.To("db")}}}
	pod := podWithProbe(Liveness, p)
	r, output, err := e.m.probe(e.ctx, Liveness, pod, &corev1.PodStatus{PodIP: "127.0.0.1"}, &pod.Spec.Containers[0], testContainerID)
	if r != Failure || output != `service unhealthy (responded with "NOT_SERVING")` || err != nil {
		t.Errorf("probe = %s, %q, %v", r, output, err)
	}
}

// The User-Agent names the Kubernetes minor of the modules in go.mod (k8s.io/api v0.36.x is
// Kubernetes 1.36), as upstream's names the kubelet's own release.
func TestUserAgentMatchesGoMod(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/api v0\.(\d+)\.`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod does not require k8s.io/api v0.X.Y")
	}
	if want := "kube-probe/1." + string(m[1]); userAgent != want {
		t.Errorf("userAgent = %q, want %q (go.mod has k8s.io/api v0.%s)", userAgent, want, m[1])
	}
}

// serveGRPC serves srv on 127.0.0.1 until the test ends and returns its port.
func serveGRPC(t *testing.T, srv *grpc.Server) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

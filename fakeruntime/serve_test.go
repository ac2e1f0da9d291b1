package fakeruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// newServeEnv is a test env whose pod IPs come from a loopback /24 of its own, so that test
// processes running at the same time never serve on the same address.
func newServeEnv(t *testing.T) *testEnv {
	t.Helper()
	cidr := fmt.Sprintf("127.%d.%d.0/24", 100+rand.IntN(150), rand.IntN(256))
	return newTestEnv(t, func(c *Config) { c.PodCIDR = cidr })
}

// runServing starts a container with command in a new sandbox and returns its ID and pod IP.
func (e *testEnv) runServing(t *testing.T, name string, mounts []*runtimeapi.Mount, command ...string) (id, podIP string) {
	t.Helper()
	sb := e.runSandbox(t, sandboxConfig(name))
	cfg := containerConfig(name, command...)
	cfg.Mounts = mounts
	id = e.createContainer(t, sb, cfg)
	e.startContainer(t, id)
	resp, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
	if err != nil {
		t.Fatal(err)
	}
	return id, resp.GetStatus().GetNetwork().GetIp()
}

// execSync runs cmd in container id and fails the test unless it succeeds.
func (e *testEnv) execSync(t *testing.T, id string, cmd ...string) {
	t.Helper()
	resp, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 5})
	if err != nil || resp.GetExitCode() != 0 {
		t.Fatalf("ExecSync %q: %v, exit %d %s", cmd, err, resp.GetExitCode(), resp.GetStderr())
	}
}

// get is what the kubelet's httpGet probe does: GET http://podIP:port/path.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// TestServeHTTP pins `serve http`: a real HTTP server on the pod IP whose answers can follow the
// container's filesystem, so `kubectl exec … rm /tmp/ready` flips a readiness probe.
func TestServeHTTP(t *testing.T) {
	e := newServeEnv(t)
	www := t.TempDir()
	if err := os.WriteFile(filepath.Join(www, "index.html"), []byte("<h1>hello</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, ip := e.runServing(t, "web", []*runtimeapi.Mount{{ContainerPath: "/usr/share/nginx/html", HostPath: www, Readonly: true}},
		"sh", "-c", "echo ready > /tmp/ready; serve http 8080 /healthz=200 /ready=/tmp/ready /broken=500 /static/=/usr/share/nginx/html")
	base := "http://" + net.JoinHostPort(ip, "8080")
	tests := []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/healthz", 200, "OK\n"},
		{"/ready", 200, "ready\n"},
		{"/broken", 500, "Internal Server Error\n"},
		{"/static/", 200, "<h1>hello</h1>"},
		{"/static/index.html", 200, "<h1>hello</h1>"},
		{"/static/none.html", 404, "404 page not found\n"},
		{"/elsewhere", 404, "404 page not found\n"},
	}
	for _, tc := range tests {
		if code, body := get(t, base+tc.path); code != tc.wantCode || body != tc.wantBody {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, code, body, tc.wantCode, tc.wantBody)
		}
	}
	e.execSync(t, id, "rm", "/tmp/ready")
	if code, _ := get(t, base+"/ready"); code != http.StatusNotFound {
		t.Errorf("GET /ready after rm = %d, want 404", code)
	}

	// The listener closes when the container stops.
	if _, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", net.JoinHostPort(ip, "8080")); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after stop: %v, want connection refused", err)
	}
}

// TestServeTCPAndPortForward pins `serve tcp` (an echo server, what tcpSocket probes connect to)
// and that kubectl port-forward reaches a port the pod serves, not the fallback echo.
func TestServeTCPAndPortForward(t *testing.T) {
	e := newServeEnv(t)
	_, ip := e.runServing(t, "tcp", nil, "sh", "-c", "serve tcp 9000 & serve http 8080")
	conn, err := net.Dial("tcp", net.JoinHostPort(ip, "9000"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(conn); err != nil || string(got) != "ping" {
		t.Errorf("echo = %q, %v", got, err)
	}

	resp, err := e.rs.ListPodSandbox(e.ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	local, forwarded := e.forwardPortTo(t, resp.GetItems()[0].GetId(), 8080, stop)
	defer func() {
		close(stop)
		<-forwarded
	}()
	if code, body := get(t, fmt.Sprintf("http://127.0.0.1:%d/", local)); code != 200 || body != "OK\n" {
		t.Errorf("GET through port-forward = %d %q, want the pod's HTTP server", code, body)
	}
}

// TestServeGRPC pins `serve grpc`: grpc.health.v1 Health/Check as the kubelet's grpc probe calls
// it, SERVING while a file exists.
func TestServeGRPC(t *testing.T) {
	e := newServeEnv(t)
	id, ip := e.runServing(t, "grpc", nil, "serve", "grpc", "9090", "/tmp/serving")
	conn, err := grpc.NewClient("passthrough:///"+net.JoinHostPort(ip, "9090"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	check := func() healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		defer cancel()
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "any"})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		return resp.GetStatus()
	}
	if got := check(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("before touch: %v, want NOT_SERVING", got)
	}
	e.execSync(t, id, "touch", "/tmp/serving")
	if got := check(); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("after touch: %v, want SERVING", got)
	}
}

// TestServeOutsideLoopback pins the advice a container gets when the pod CIDR is not loopback:
// the fake never touches the host's network, so it cannot serve there.
func TestServeOutsideLoopback(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.PodCIDR = "10.88.0.0/16" })
	id, _ := e.runServing(t, "web", nil, "serve", "http", "8080")
	st := e.waitExited(t, id)
	log, err := os.ReadFile(st.GetLogPath())
	if st.GetExitCode() != 1 || err != nil || !strings.Contains(string(log), "is not a loopback address") || !strings.Contains(string(log), "--pod-cidr") {
		t.Errorf("exit %d, log %q (%v); want exit 1 and advice about --pod-cidr", st.GetExitCode(), log, err)
	}
}

// TestServeInExecEndsWithTheExec pins that an exec'd server lives as long as its exec: here an
// ExecSync whose timeout runs on the fake clock.
func TestServeInExecEndsWithTheExec(t *testing.T) {
	e := newServeEnv(t)
	id, ip := e.runServing(t, "app", nil, "sleep", "infinity")
	done := make(chan error, 1)
	go func() {
		_, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"serve", "tcp", "7000"}, Timeout: 1})
		done <- err
	}()
	poll(t, e.ctx, func() bool { // the exec starts serving on its own goroutine
		conn, err := net.Dial("tcp", net.JoinHostPort(ip, "7000"))
		if err == nil {
			_ = conn.Close()
		}
		return err == nil
	})
	e.clock.Step(time.Second)
	if err := <-done; err == nil {
		t.Error("ExecSync of a server returned before its timeout")
	}
	if _, err := net.Dial("tcp", net.JoinHostPort(ip, "7000")); err == nil {
		t.Error("the exec'd server still listens after the exec ended")
	}
}

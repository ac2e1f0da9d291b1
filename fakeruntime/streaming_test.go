package fakeruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// TestStreamingAddrMustBeLoopback pins that the streaming server, plain HTTP guarded only by
// one-time tokens, listens on loopback only (containerd's default stream_server_address).
func TestStreamingAddrMustBeLoopback(t *testing.T) {
	tests := []struct {
		addr    string
		wantErr bool
	}{
		{"", false},
		{"127.0.0.1:0", false},
		{"127.0.0.1:10010", false},
		{"[::1]:0", false},
		{"localhost:0", false},
		{"0.0.0.0:10010", true},
		{":10010", true},
		{"[::]:0", true},
		{"192.168.1.10:0", true},
		{"127.0.0.1", true},
		{"127.0.0.1:99999", true},
	}
	for _, tc := range tests {
		name := tc.addr
		if name == "" {
			name = "empty means DefaultStreamingAddr"
		}
		t.Run(name, func(t *testing.T) {
			_, err := New(Config{Socket: "/tmp/x.sock", StreamingAddr: tc.addr})
			if (err != nil) != tc.wantErr {
				t.Errorf("New with StreamingAddr %q: err = %v, want error %v", tc.addr, err, tc.wantErr)
			}
		})
	}
}

// streamEnv is a test env with a RUNNING container "app" (program `sleep infinity`) whose CRI
// mount /etc/config is a host directory holding the file "key".
type streamEnv struct {
	*testEnv
	sandboxID   string
	containerID string
}

func newStreamEnv(t *testing.T) *streamEnv {
	t.Helper()
	e := newTestEnv(t, nil)
	configDir := filepath.Join(e.dir, "config")
	if err := os.MkdirAll(configDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configDir, "key"), []byte("value\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := e.runSandbox(t, sandboxConfig("pod"))
	cfg := containerConfig("app", "sleep", "infinity")
	cfg.Envs = []*runtimeapi.KeyValue{{Key: "GREETING", Value: []byte("hello")}}
	cfg.Mounts = []*runtimeapi.Mount{{ContainerPath: "/etc/config", HostPath: configDir}}
	id := e.createContainer(t, sb, cfg)
	e.startContainer(t, id)
	return &streamEnv{testEnv: e, sandboxID: sb, containerID: id}
}

// execURL asks the runtime over CRI for an exec URL, as the kubelet does.
func (e *streamEnv) execURL(t *testing.T, req *runtimeapi.ExecRequest) string {
	t.Helper()
	if req.ContainerId == "" {
		req.ContainerId = e.containerID
	}
	resp, err := e.rs.Exec(e.ctx, req)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if !strings.HasPrefix(resp.GetUrl(), e.rt.StreamingURL()+"/exec/") {
		t.Fatalf("Exec URL %q is not on the streaming server %q", resp.GetUrl(), e.rt.StreamingURL())
	}
	return resp.GetUrl()
}

// executor builds a client-go remotecommand executor for a streaming URL, as kubectl (and the
// kubelet's proxy) would. The streaming server speaks SPDY and, up to v4, WebSocket.
type executor func(t *testing.T, rawURL string) remotecommand.Executor

func spdyExecutor(t *testing.T, rawURL string) remotecommand.Executor {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: u.Scheme + "://" + u.Host}, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

func webSocketExecutor(t *testing.T, rawURL string) remotecommand.Executor {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	// The CRI streaming library serves the v4 WebSocket protocol (v5 adds closing stdin).
	exec, err := remotecommand.NewWebSocketExecutorForProtocols(&rest.Config{Host: u.Scheme + "://" + u.Host}, http.MethodGet, rawURL, "v4.channel.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	return exec
}

// streamResult is what a client saw of a session.
type streamResult struct {
	stdout, stderr string
	err            error
}

// stream runs one session against rawURL with the given stdin (nil: none). The streams must
// match the CRI request: stdout always, stderr unless tty.
func stream(ctx context.Context, t *testing.T, newExec executor, rawURL string, stdin io.Reader, tty bool) streamResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Tty: tty}
	if !tty {
		opts.Stderr = &stderr
	}
	err := newExec(t, rawURL).StreamWithContext(ctx, opts)
	return streamResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// exitStatus is the exit code the client got: 0 for success, -1 for an error without one.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var exitErr utilexec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitStatus()
	}
	return -1
}

// TestExecStreaming pins `kubectl exec` against the fake runtime: CRI Exec returns a URL on the
// streaming server, the client streams there, and the command runs with the program grammar.
func TestExecStreaming(t *testing.T) {
	e := newStreamEnv(t)
	tests := []struct {
		name       string
		cmd        []string
		stdin      string // "" and !withStdin: no stdin stream
		withStdin  bool
		tty        bool
		wantStdout string
		wantStderr string
		wantExit   int
		spdyOnly   bool // WebSocket v4 cannot signal the end of stdin
	}{
		{name: "echo writes to stdout", cmd: []string{"echo", "hi"}, wantStdout: "hi\n"},
		{name: "echo >&2 writes to stderr", cmd: []string{"sh", "-c", "echo a; echo b >&2"}, wantStdout: "a\n", wantStderr: "b\n"},
		{name: "cat without arguments copies stdin (kubectl exec -i pod -- cat)", cmd: []string{"cat"}, stdin: "abc", withStdin: true, wantStdout: "abc", spdyOnly: true},
		{name: "cat without stdin reads nothing", cmd: []string{"cat"}},
		{name: "cat > F stores stdin in the container's layer", cmd: []string{"sh", "-c", "cat > /tmp/in && cat /tmp/in"}, stdin: "abc", withStdin: true, wantStdout: "abc", spdyOnly: true},
		{name: "exit status reaches the client", cmd: []string{"sh", "-c", "exit 3"}, wantExit: 3},
		{name: "output before a failing exit is kept", cmd: []string{"sh", "-c", "echo partial; false"}, wantStdout: "partial\n", wantExit: 1},
		{name: "tty turns newlines into CRLF", cmd: []string{"echo", "hi"}, tty: true, wantStdout: "hi\r\n"},
		{name: "tty sends stderr to stdout", cmd: []string{"sh", "-c", "echo a; echo b >&2"}, tty: true, wantStdout: "a\r\nb\r\n"},
		{name: "printenv NAME reads the container's CRI env", cmd: []string{"printenv", "GREETING"}, wantStdout: "hello\n"},
		{name: "env lists the container's CRI env", cmd: []string{"env"}, wantStdout: "GREETING=hello\n"},
		{name: "cat FILE reads a CRI mount", cmd: []string{"cat", "/etc/config/key"}, wantStdout: "value\n"},
		{name: "cat of an unmounted path fails", cmd: []string{"cat", "/etc/passwd"}, wantStderr: "cat: can't open '/etc/passwd': No such file or directory\n", wantExit: 1},
		{name: "ls lists a CRI mount", cmd: []string{"ls", "/etc/config"}, wantStdout: "key\n"},
		{name: "unknown commands succeed with no output, as in ExecSync", cmd: []string{"nginx", "-t"}},
		{name: "sh without a tty runs the lines of stdin (kubectl exec -i pod -- sh < script)", cmd: []string{"sh"}, stdin: "echo one\nls /etc/config\nvi\nfalse", withStdin: true,
			wantStdout: "one\nkey\n", wantStderr: "sh: vi: not found\n", wantExit: 1, spdyOnly: true},
		{name: "sh without a tty stops at exit", cmd: []string{"sh"}, stdin: "echo one\nexit 4\necho two\n", withStdin: true, wantStdout: "one\n", wantExit: 4, spdyOnly: true},
	}
	for _, client := range []struct {
		name    string
		newExec executor
	}{{"SPDY", spdyExecutor}, {"WebSocket", webSocketExecutor}} {
		for _, tc := range tests {
			t.Run(client.name+"/"+tc.name, func(t *testing.T) {
				if tc.spdyOnly && client.name != "SPDY" {
					t.Skip("WebSocket v4 has no way to close stdin")
				}
				url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: tc.cmd, Stdin: tc.withStdin, Stdout: true, Stderr: !tc.tty, Tty: tc.tty})
				var stdin io.Reader
				if tc.withStdin {
					stdin = strings.NewReader(tc.stdin)
				}
				got := stream(e.ctx, t, client.newExec, url, stdin, tc.tty)
				if got.stdout != tc.wantStdout || got.stderr != tc.wantStderr {
					t.Errorf("stdout %q stderr %q, want %q %q", got.stdout, got.stderr, tc.wantStdout, tc.wantStderr)
				}
				if code := exitStatus(got.err); code != tc.wantExit {
					t.Errorf("exit status %d (err %v), want %d", code, got.err, tc.wantExit)
				}
			})
		}
	}
}

// TestExecURLIsOneTime pins that a streaming URL's token is consumed by its first use, as in
// every CRI runtime built on the streaming library.
func TestExecURLIsOneTime(t *testing.T) {
	e := newStreamEnv(t)
	url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: []string{"echo", "once"}, Stdout: true, Stderr: true})
	if got := stream(e.ctx, t, spdyExecutor, url, nil, false); got.err != nil || got.stdout != "once\n" {
		t.Fatalf("first use: stdout %q err %v, want \"once\\n\" and no error", got.stdout, got.err)
	}
	if got := stream(e.ctx, t, spdyExecutor, url, nil, false); got.err == nil {
		t.Errorf("second use of the same URL succeeded (stdout %q), want an error", got.stdout)
	}
}

// TestStreamingRequestErrors pins the CRI errors of Exec, Attach and PortForward.
func TestStreamingRequestErrors(t *testing.T) {
	e := newStreamEnv(t)
	created := e.createContainer(t, e.sandboxID, containerConfig("created", "sleep", "infinity"))
	stopped := e.runSandbox(t, sandboxConfig("stopped"))
	if _, err := e.rs.StopPodSandbox(e.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: stopped}); err != nil {
		t.Fatal(err)
	}
	unknown := strings.Repeat("f", 64)
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"Exec of an unknown container", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: unknown, Cmd: []string{"sh"}, Stdout: true})
			return err
		}, codes.NotFound},
		{"Exec in a CREATED container", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: created, Cmd: []string{"sh"}, Stdout: true})
			return err
		}, codes.FailedPrecondition},
		{"Exec without cmd", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: e.containerID, Stdout: true})
			return err
		}, codes.InvalidArgument},
		{"Exec without any stream", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: e.containerID, Cmd: []string{"sh"}})
			return err
		}, codes.InvalidArgument},
		{"Exec with tty and stderr (a tty has one output)", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: e.containerID, Cmd: []string{"sh"}, Tty: true, Stdout: true, Stderr: true})
			return err
		}, codes.InvalidArgument},
		{"Exec by unique ID prefix", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: e.containerID[:12], Cmd: []string{"sh"}, Stdout: true})
			return err
		}, codes.OK},
		{"Attach to a CREATED container", func() error {
			_, err := e.rs.Attach(e.ctx, &runtimeapi.AttachRequest{ContainerId: created, Stdout: true})
			return err
		}, codes.FailedPrecondition},
		{"Attach without any stream", func() error {
			_, err := e.rs.Attach(e.ctx, &runtimeapi.AttachRequest{ContainerId: e.containerID})
			return err
		}, codes.InvalidArgument},
		{"PortForward to an unknown sandbox", func() error {
			_, err := e.rs.PortForward(e.ctx, &runtimeapi.PortForwardRequest{PodSandboxId: unknown, Port: []int32{80}})
			return err
		}, codes.NotFound},
		{"PortForward to a NOTREADY sandbox", func() error {
			_, err := e.rs.PortForward(e.ctx, &runtimeapi.PortForwardRequest{PodSandboxId: stopped, Port: []int32{80}})
			return err
		}, codes.FailedPrecondition},
		{"PortForward to port 0", func() error {
			_, err := e.rs.PortForward(e.ctx, &runtimeapi.PortForwardRequest{PodSandboxId: e.sandboxID, Port: []int32{0}})
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.call(), tc.want) })
	}
}

// TestExecSleepWaitsOnTheClock pins that `sleep N` in an exec session waits on the runtime's
// injected clock, not on wall time.
func TestExecSleepWaitsOnTheClock(t *testing.T) {
	e := newStreamEnv(t)
	url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", "echo before; sleep 30; echo after"}, Stdout: true, Stderr: true})
	done := make(chan streamResult, 1)
	go func() { done <- stream(e.ctx, t, spdyExecutor, url, nil, false) }()
	waitForWaiters(t, e.testEnv)
	select {
	case got := <-done:
		t.Fatalf("session ended before the clock moved: %+v", got)
	default:
	}
	e.clock.Step(30 * time.Second)
	got := <-done
	if got.err != nil || got.stdout != "before\nafter\n" {
		t.Errorf("stdout %q err %v, want \"before\\nafter\\n\" and no error", got.stdout, got.err)
	}
}

// TestExecEndsWhenContainerExits pins that an exec'd process dies with its container: the client
// sees exit code 137 (SIGKILL), as when a real container's PID namespace goes away.
func TestExecEndsWhenContainerExits(t *testing.T) {
	e := newStreamEnv(t)
	url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: []string{"sleep", "1000"}, Stdout: true, Stderr: true})
	done := make(chan streamResult, 1)
	go func() { done <- stream(e.ctx, t, spdyExecutor, url, nil, false) }()
	waitForWaiters(t, e.testEnv) // the exec'd sleep is running
	if _, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: e.containerID, Timeout: 0}); err != nil {
		t.Fatal(err)
	}
	if got := <-done; exitStatus(got.err) != int(exitCodeSIGKILL) {
		t.Errorf("exit status %d (err %v), want %d", exitStatus(got.err), got.err, exitCodeSIGKILL)
	}
}

// sessionsOpen counts the streaming connections in flight.
func (e *testEnv) sessionsOpen() int {
	s := e.rt.sessions
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// TestExecNeverRunsHostPrograms pins the fake runtime's first promise: nothing a client sends is
// ever executed on the host, whether through exec streaming, ExecSync or a container's command.
func TestExecNeverRunsHostPrograms(t *testing.T) {
	e := newStreamEnv(t)
	pwned := filepath.Join(e.dir, "pwned")
	commands := [][]string{
		{"/bin/touch", pwned},
		{"touch", pwned},
		{"sh", "-c", "touch " + pwned},
		{"/bin/sh", "-c", "echo x > " + pwned},
		{"bash", "-c", "cat /etc/hostname && touch " + pwned},
	}
	for i, cmd := range commands {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: cmd, Stdout: true, Stderr: true})
			got := stream(e.ctx, t, spdyExecutor, url, nil, false)
			if got.err != nil && exitStatus(got.err) < 0 {
				t.Errorf("exec: %v", got.err)
			}
			if _, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: e.containerID, Cmd: cmd, Timeout: 5}); err != nil {
				t.Errorf("ExecSync: %v", err)
			}
			name := fmt.Sprintf("cmd%d", i)
			id := e.createContainer(t, e.sandboxID, containerConfig(name, cmd...))
			e.startContainer(t, id)
			if _, err := os.Stat(pwned); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s exists after running %q (stat: %v): a host program ran", pwned, cmd, err)
			}
		})
	}
}

// TestAttach pins `kubectl attach`: the client receives what the container's program writes after
// the session starts, on the right streams, until the container exits.
func TestAttach(t *testing.T) {
	e := newStreamEnv(t)
	id := e.createContainer(t, e.sandboxID, containerConfig("talker", "sh", "-c", "echo early; sleep 10; echo late; echo oops >&2; exit 2"))
	e.startContainer(t, id)
	resp, err := e.rs.Attach(e.ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	if !strings.HasPrefix(resp.GetUrl(), e.rt.StreamingURL()+"/attach/") {
		t.Fatalf("Attach URL %q is not on the streaming server %q", resp.GetUrl(), e.rt.StreamingURL())
	}
	done := make(chan streamResult, 1)
	stdin, stdinWriter := io.Pipe()
	defer func() { _ = stdinWriter.Close() }()
	go func() { done <- stream(e.ctx, t, spdyExecutor, resp.GetUrl(), stdin, false) }()
	poll(t, e.ctx, func() bool { return e.attachedTo(id) > 0 })
	if _, err := stdinWriter.Write([]byte("ignored input\n")); err != nil {
		t.Fatalf("write stdin: %v", err)
	}
	e.clock.Step(10 * time.Second)
	got := <-done
	if got.err != nil {
		t.Errorf("attach ended with %v, want nil when the container exits", got.err)
	}
	if got.stdout != "late\n" || got.stderr != "oops\n" {
		t.Errorf("stdout %q stderr %q, want \"late\\n\" \"oops\\n\" (output from before the attach is not replayed)", got.stdout, got.stderr)
	}
	if st := e.waitExited(t, id); st.GetExitCode() != 2 {
		t.Errorf("container exit code %d, want 2", st.GetExitCode())
	}
	if n := e.attachedTo(id); n != 0 {
		t.Errorf("%d attach sessions still registered after the session ended", n)
	}
}

// attachedTo counts the attach sessions of a container.
func (e *testEnv) attachedTo(id string) int {
	e.rt.mu.Lock()
	defer e.rt.mu.Unlock()
	return len(e.rt.containers[id].attached)
}

// forwardPort does what `kubectl port-forward pod :80` does: CRI PortForward for the sandbox,
// then client-go's port forwarder over SPDY on a free local port, which it returns. The forwarder
// runs until stop is closed; forwarded then yields ForwardPorts' result.
func (e *streamEnv) forwardPort(t *testing.T, stop chan struct{}) (local uint16, forwarded <-chan error) {
	t.Helper()
	return e.forwardPortTo(t, e.sandboxID, 80, stop)
}

// forwardPortTo is forwardPort to any port of any sandbox.
func (e *testEnv) forwardPortTo(t *testing.T, sandboxID string, port int32, stop chan struct{}) (local uint16, forwarded <-chan error) {
	t.Helper()
	resp, err := e.rs.PortForward(e.ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID, Port: []int32{port}})
	if err != nil {
		t.Fatalf("PortForward: %v", err)
	}
	if !strings.HasPrefix(resp.GetUrl(), e.rt.StreamingURL()+"/portforward/") {
		t.Fatalf("PortForward URL %q is not on the streaming server %q", resp.GetUrl(), e.rt.StreamingURL())
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		t.Fatal(err)
	}
	transport, upgrader, err := spdy.RoundTripperFor(&rest.Config{Host: u.Scheme + "://" + u.Host})
	if err != nil {
		t.Fatal(err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() { result <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-result:
		t.Fatalf("ForwardPorts: %v", err)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		t.Fatalf("GetPorts: %v %v", ports, err)
	}
	return ports[0].Local, result
}

func dialLocal(t *testing.T, port uint16) *net.TCPConn {
	t.Helper()
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn.(*net.TCPConn)
}

// TestPortForwardEchoes pins `kubectl port-forward`: CRI PortForward returns a URL, client-go's
// port forwarder listens locally and every port of the fake pod echoes what it is sent.
func TestPortForwardEchoes(t *testing.T) {
	e := newStreamEnv(t)
	stop := make(chan struct{})
	local, forwarded := e.forwardPort(t, stop)
	defer func() {
		close(stop)
		if err := <-forwarded; err != nil {
			t.Errorf("ForwardPorts: %v", err)
		}
	}()

	// Two connections in turn: each is its own stream pair on the same SPDY connection.
	for _, msg := range []string{"ping", "second connection"} {
		conn := dialLocal(t, local)
		if _, err := conn.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if err := conn.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(conn)
		if err != nil || string(got) != msg {
			t.Errorf("read back %q (err %v), want %q", got, err, msg)
		}
	}
}

// TestServeEndsOpenSessions pins that stopping the runtime cuts streaming sessions that are still
// open (their connections were hijacked, so http.Server.Close alone would leave them running).
func TestServeEndsOpenSessions(t *testing.T) {
	e := newStreamEnv(t)
	url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: []string{"cat"}, Stdin: true, Stdout: true, Stderr: true})
	stdin, stdinWriter := io.Pipe()
	defer func() { _ = stdinWriter.Close() }()
	stdoutReader, stdout := io.Pipe()
	defer func() { _ = stdoutReader.Close() }()
	done := make(chan error, 1)
	go func() {
		opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: io.Discard}
		done <- spdyExecutor(t, url).StreamWithContext(context.Background(), opts)
		_ = stdout.Close()
	}()
	// Once cat echoes a byte, the session is running inside the runtime.
	if _, err := stdinWriter.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(stdoutReader, make([]byte, 1)); err != nil {
		t.Fatalf("read cat's echo: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdoutReader) }()
	if err := e.stop(); err != nil {
		t.Fatalf("Serve returned %v, want nil", err)
	}
	if n := e.sessionsOpen(); n != 0 {
		t.Errorf("%d sessions open after Serve returned", n)
	}
	// The client's session ends too. Whether it sees an error depends on whether the "context
	// canceled" status got out before the connection was cut, so only the ending is pinned.
	<-done
}

// TestServeEndsOpenPortForwards pins the same for port-forward, whose sessions the streaming
// library runs without a request context: only closing their connection ends them.
func TestServeEndsOpenPortForwards(t *testing.T) {
	e := newStreamEnv(t)
	stop := make(chan struct{})
	defer close(stop)
	local, forwarded := e.forwardPort(t, stop)
	conn := dialLocal(t, local)
	if _, err := conn.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
		t.Fatalf("read the echo: %v", err)
	}
	if err := e.stop(); err != nil {
		t.Fatalf("Serve returned %v, want nil", err)
	}
	if n := e.sessionsOpen(); n != 0 {
		t.Errorf("%d sessions open after Serve returned", n)
	}
	// The forwarder notices that the runtime went away, and the local connection ends.
	if err := <-forwarded; err == nil {
		t.Errorf("ForwardPorts returned nil, want an error: the runtime went away")
	}
	if rest, err := io.ReadAll(conn); len(rest) != 0 {
		t.Errorf("read %q (err %v) after the runtime stopped, want nothing", rest, err)
	}
}

package fakeruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"
)

// attachBuffer is how many writes of the program an attach session may fall behind before further
// output is dropped for it (the container never waits for a slow client).
const attachBuffer = 64

// ExecSync runs cmd "inside" a running container with the program grammar (see doc.go) and
// returns its output. Nothing runs on the host. Unknown commands succeed with no output.
func (r *Runtime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if len(req.GetCmd()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "cmd is required")
	}
	if req.GetTimeout() < 0 {
		return nil, status.Error(codes.InvalidArgument, "timeout must not be negative")
	}
	c, v, err := r.execTarget(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(4).Info("ExecSync", "containerID", c.id, "cmd", req.GetCmd())

	// The timeout runs on the runtime's clock so tests can step it.
	var deadline <-chan time.Time
	if req.GetTimeout() > 0 {
		t := r.clock.NewTimer(time.Duration(req.GetTimeout()) * time.Second)
		defer t.Stop()
		deadline = t.C()
	}
	var stdout, stderr bytes.Buffer
	code, err := r.execute(ctx, &process{program: parseProgram(req.GetCmd(), unknownSucceeds)}, v, newStreamOutput(&stdout, &stderr, false), programInput{}, nil, deadline)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	case err != nil:
		return nil, status.Errorf(codes.DeadlineExceeded, "command %q timed out after %ds", req.GetCmd(), req.GetTimeout())
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: code}, nil
}

// execTarget finds the RUNNING container an exec names, and what its commands may see.
func (r *Runtime) execTarget(id string) (*container, view, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.runningContainerLocked(id)
	if err != nil {
		return nil, view{}, err
	}
	return c, r.viewLocked(c), nil
}

// streamer is the fake runtime's side of streaming sessions: the streaming server calls it once a
// client has opened a URL that Exec, Attach or PortForward handed out (streaming.go). It never
// runs a host program: exec runs the program grammar, attach relays the program's output,
// port-forward echoes (doc.go has what each does).
type streamer struct {
	r *Runtime
}

var _ streaming.Runtime = (*streamer)(nil)

// Exec runs cmd in a RUNNING container as ExecSync does, but live (execute): output reaches the
// client as each step runs and a non-zero exit status is returned as a utilexec.CodeExitError.
// With stdin and a tty the session has a terminal (tty.go): what the client types is echoed and
// edited, Ctrl-C interrupts, and `sh` with no script is the interactive shell (shell.go); without
// a tty, `sh` runs the lines it reads from stdin, with no prompt.
func (s *streamer) Exec(ctx context.Context, containerID string, cmd []string, stdin io.Reader, stdout, stderr io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	logger := klog.FromContext(ctx)
	r := s.r
	c, v, err := r.execTarget(containerID)
	if err != nil {
		drainResize(logger, resize)
		return err
	}
	logger.V(2).Info("Exec session started", "containerID", c.id, "cmd", cmd, "tty", tty)
	var out sink = newStreamOutput(stdout, stderr, tty)
	in := programInput{stdin: stdin}
	shell := stdin != nil && isInteractiveShell(cmd)
	if stdin != nil && (tty || shell) {
		locked := &lockedSink{out: out}
		in = programInput{term: newTerminal(locked, false)}
		in.term.plain = !tty
		out = locked
		go typeInto(logger, stdin, in.term, true)
	}
	if in.term != nil && tty && resize != nil {
		go resizeTerminal(logger, resize, in.term)
	} else {
		drainResize(logger, resize)
	}
	var code int32
	switch {
	case shell && tty:
		code, err = r.interact(ctx, v, in.term, shellPrompt(c.config), c.exited)
	case shell: // sh reading a script from stdin: no prompt
		code, err = r.interact(ctx, v, in.term, "", c.exited)
	default:
		code, err = r.execute(ctx, &process{program: parseProgram(cmd, unknownSucceeds)}, v, out, in, c.exited, nil)
	}
	if errors.Is(err, errInterrupted) {
		code, err = exitCodeSIGINT, nil
	}
	if err != nil || code == 0 {
		return err
	}
	// The streaming server turns a utilexec.ExitError, returned as is (it checks the type), into
	// the NonZeroExitCode status that kubectl prints and exits with.
	return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: int(code)}
}

// output is one write of a container's program, as attach sessions receive it.
type output struct {
	stream runtimeapi.LogStreamType
	text   string
}

// Attach streams what a RUNNING container's program writes from now on to the client, until the
// container exits (exitLocked closes the session's channel), the client is gone (noticed at the
// next write) or the runtime stops. A container started with stdin and a tty running a shell
// reads what the client types on its terminal (and StdinOnce ends its input when this client's
// stdin ends); any other program reads no input: stdin is read and discarded.
func (s *streamer) Attach(ctx context.Context, containerID string, stdin io.Reader, stdout, stderr io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	logger := klog.FromContext(ctx)
	r := s.r
	session := make(chan output, attachBuffer)
	r.mu.Lock()
	c, err := r.runningContainerLocked(containerID)
	var term *terminal
	if err == nil {
		c.attached[session] = struct{}{}
		term = c.term
	}
	r.mu.Unlock()
	switch {
	case term != nil && stdin != nil:
		go typeInto(logger, stdin, term, c.config.GetStdinOnce())
	case stdin != nil:
		// Ends when the client closes stdin or the server closes the connection.
		go func() { _, _ = io.Copy(io.Discard, stdin) }()
	}
	if term != nil && resize != nil {
		go resizeTerminal(logger, resize, term)
	} else {
		drainResize(logger, resize)
	}
	if err != nil {
		return err
	}
	defer func() {
		r.mu.Lock()
		delete(c.attached, session)
		r.mu.Unlock()
	}()
	logger.V(2).Info("Attach session started", "containerID", c.id, "tty", tty)
	out := newStreamOutput(stdout, stderr, tty)
	for {
		select {
		case o, open := <-session:
			if !open {
				logger.V(2).Info("Attach session ended: container exited", "containerID", c.id)
				return nil
			}
			if err := out.write(o.stream, o.text); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// PortForward serves one forwarded connection to port of a READY sandbox: to the server a
// container of the pod runs there (serve), or else an echo of what the client sends until it
// closes its side. The session also ends when the runtime stops and cuts its connection (the
// library passes context.Background() here: there is nothing to watch).
func (s *streamer) PortForward(_ context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	if err := validatePort(port); err != nil {
		return err
	}
	r := s.r
	r.mu.Lock()
	sb, err := r.readySandboxLocked(podSandboxID)
	var srv *server
	if err == nil {
		srv = r.listeners[netip.AddrPortFrom(sb.serveIP(), uint16(port))]
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	// The library runs each forwarded connection on its own goroutine, outside the HTTP handler:
	// track it so Serve waits for it.
	if !r.sessions.begin(nil) {
		return errors.New("the fake runtime is shutting down")
	}
	defer r.sessions.end(nil)
	r.logger.V(2).Info("Port-forward connection", "podSandboxID", sb.id, "port", port, "served", srv != nil)
	if srv != nil {
		return forward(stream, srv.addr)
	}
	// The wrappers hide ReaderFrom/WriterTo so io.Copy moves plain bytes from the stream to itself.
	if _, err := io.Copy(struct{ io.Writer }{stream}, struct{ io.Reader }{stream}); err != nil {
		return fmt.Errorf("echo on port %d: %w", port, err)
	}
	return nil
}

// forward connects a port-forward stream to a container's server at addr, both ways. When the
// client closes its side the server's side is half-closed; when the server closes, so does the
// stream.
func forward(stream io.ReadWriteCloser, addr netip.AddrPort) error {
	conn, err := net.DialTCP("tcp", nil, net.TCPAddrFromAddrPort(addr))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer func() { _ = conn.Close() }()
	fromServer := make(chan error, 1)
	go func() {
		_, err := io.Copy(struct{ io.Writer }{stream}, conn)
		_ = stream.Close() // ends the copy below if the client is still sending
		fromServer <- err
	}()
	_, _ = io.Copy(conn, struct{ io.Reader }{stream})
	_ = conn.CloseWrite()
	if err := <-fromServer; err != nil {
		return fmt.Errorf("forward to %s: %w", addr, err)
	}
	return nil
}

// drainResize reads terminal resize events and ignores them: fake programs have no terminal
// size. The streaming server closes the channel when the session ends, which ends the goroutine.
func drainResize(logger klog.Logger, resize <-chan remotecommand.TerminalSize) {
	if resize == nil {
		return
	}
	go func() {
		for size := range resize {
			logger.V(5).Info("Terminal resize ignored", "width", size.Width, "height", size.Height)
		}
	}()
}

// streamOutput is the sink of exec'd programs: the client's streams, or ExecSync's buffers.
type streamOutput struct {
	stdout, stderr io.Writer // io.Discard for a stream the client did not ask for
}

// newStreamOutput routes stdout and stderr to the client's streams; with tty, both go to stdout
// with "\n" turned into "\r\n", as a terminal (the ONLCR setting of a pty) does.
func newStreamOutput(stdout, stderr io.Writer, tty bool) streamOutput {
	o := streamOutput{stdout: io.Discard, stderr: io.Discard}
	if stdout != nil {
		o.stdout = stdout
	}
	if stderr != nil {
		o.stderr = stderr
	}
	if tty {
		o.stdout = crlfWriter{o.stdout}
		o.stderr = o.stdout
	}
	return o
}

// write writes text to stream. An error means the client has gone.
func (o streamOutput) write(stream runtimeapi.LogStreamType, text string) error {
	w := o.stdout
	if stream == runtimeapi.Stderr {
		w = o.stderr
	}
	if text == "" {
		return nil
	}
	if _, err := io.WriteString(w, text); err != nil {
		return fmt.Errorf("write %s: %w", stream, err)
	}
	return nil
}

// crlfWriter turns "\n" into "\r\n".
type crlfWriter struct{ w io.Writer }

func (c crlfWriter) Write(p []byte) (int, error) {
	if _, err := c.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

package fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"
)

const (
	// attachBuffer is how many writes of the program an attach session may fall behind before
	// further output is dropped for it (the container never waits for a slow client).
	attachBuffer = 64
	// exitCodeKilled is what an exec session ends with when its container exits under it: in a
	// real runtime the exec'd process dies with the container's PID namespace, by SIGKILL.
	exitCodeKilled = exitCodeSIGKILL
)

// streamer is the fake runtime's side of streaming sessions: the streaming server calls it once a
// client has opened a URL that Exec, Attach or PortForward handed out. It never runs a host
// program: exec uses the program grammar, attach relays the program's output, port-forward echoes.
type streamer struct {
	r *Runtime
}

var _ streaming.Runtime = (*streamer)(nil)

// Exec runs cmd in a RUNNING container with the program grammar (see doc.go), as ExecSync does,
// but interactively: output goes to the client as each step runs, `cat` without arguments copies
// stdin to stdout until EOF, `sleep N` waits on the runtime's clock, and a non-zero exit status is
// returned as a utilexec.CodeExitError, which the streaming server reports to the client as the
// exit code. With tty, everything goes to stdout and "\n" becomes "\r\n", as a terminal shows it.
// The session ends with exit code 137 if the container exits meanwhile.
func (s *streamer) Exec(ctx context.Context, containerID string, cmd []string, stdin io.Reader, stdout, stderr io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	logger := klog.FromContext(ctx)
	drainResize(logger, resize)
	r := s.r
	r.mu.Lock()
	c, err := r.runningContainerLocked(containerID)
	var v view
	var exited <-chan struct{}
	if err == nil {
		v, exited = r.viewLocked(c), c.exited
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	logger.V(2).Info("Exec session started", "containerID", c.id, "cmd", cmd, "tty", tty)

	out := newStreamOutput(stdout, stderr, tty)
	for _, st := range parseProgram(cmd, unknownSucceeds) {
		switch st.kind {
		case stepEcho:
			text := st.text
			if !st.noEOL {
				text += "\n"
			}
			if err := out.write(st.stream, text); err != nil {
				return err
			}
		case stepInspect:
			if st.argv[0] == "cat" && len(st.argv) == 1 {
				if err := copyStdin(ctx, exited, stdin, out.writer(runtimeapi.Stdout)); err != nil {
					return err
				}
				continue
			}
			stdoutText, stderrText, code := inspect(v, st.argv[0], st.argv[1:])
			if err := out.write(runtimeapi.Stdout, stdoutText); err != nil {
				return err
			}
			if err := out.write(runtimeapi.Stderr, stderrText); err != nil {
				return err
			}
			if code != 0 {
				return exitError(code)
			}
		case stepExit:
			if st.code != 0 {
				return exitError(st.code)
			}
			return nil
		case stepForever:
			return waitStep(ctx, exited, nil)
		case stepSleep:
			t := r.clock.NewTimer(st.d)
			err := waitStep(ctx, exited, t.C())
			t.Stop()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// exitError is how a streaming.Runtime reports a command's exit status: the streaming server
// turns a utilexec.ExitError into the NonZeroExitCode status that kubectl prints and exits with.
// It must be returned as is, not wrapped: the server checks the type directly.
func exitError(code int32) error {
	return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: int(code)}
}

// waitStep blocks until timer fires (nil: never), the container exits or the session ends.
func waitStep(ctx context.Context, exited <-chan struct{}, timer <-chan time.Time) error {
	select {
	case <-timer:
		return nil
	case <-exited:
		return exitError(exitCodeKilled)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// copyStdin is `cat` without arguments: it copies stdin to out until stdin ends. Without stdin
// it reads nothing, like `cat </dev/null`. The copy runs on its own goroutine so the session can
// end when the container exits; that goroutine ends when the server closes the connection.
func copyStdin(ctx context.Context, exited <-chan struct{}, stdin io.Reader, out io.Writer) error {
	if stdin == nil {
		return nil
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, stdin)
		copied <- err
	}()
	select {
	case err := <-copied:
		return err
	case <-exited:
		return exitError(exitCodeKilled)
	case <-ctx.Done():
		return ctx.Err()
	}
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

// streamOutput routes a program's output to a session's streams.
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

func (o streamOutput) writer(stream runtimeapi.LogStreamType) io.Writer {
	if stream == runtimeapi.Stderr {
		return o.stderr
	}
	return o.stdout
}

// write writes text to stream. An error means the client has gone.
func (o streamOutput) write(stream runtimeapi.LogStreamType, text string) error {
	if text == "" {
		return nil
	}
	if _, err := io.WriteString(o.writer(stream), text); err != nil {
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

// attachment is one attach session's subscription to a container's output.
type attachment struct {
	out chan output
}

// output is one write of a container's program.
type output struct {
	stream runtimeapi.LogStreamType
	text   string
}

// broadcastLocked hands text the program wrote to every attach session of c. It never blocks: a
// session whose buffer is full misses the text.
func (r *Runtime) broadcastLocked(c *container, stream runtimeapi.LogStreamType, text string) {
	for a := range c.attached {
		select {
		case a.out <- output{stream: stream, text: text}:
		default:
			r.logger.V(4).Info("Attach session too slow, output dropped", "containerID", c.id)
		}
	}
}

// Attach streams what a RUNNING container's program writes from now on (echo and the inspection
// commands of its program, as its log gets them) to the client, until the container exits, the
// client is gone (noticed at the next write) or the runtime stops. Output written before the
// session started is not replayed: that is what logs are for. A fake program reads no input, so
// stdin is read and discarded. With tty, output is on stdout with "\r\n" line ends.
func (s *streamer) Attach(ctx context.Context, containerID string, stdin io.Reader, stdout, stderr io.WriteCloser, tty bool, resize <-chan remotecommand.TerminalSize) error {
	logger := klog.FromContext(ctx)
	drainResize(logger, resize)
	if stdin != nil {
		// Ends when the client closes stdin or the server closes the connection.
		go func() { _, _ = io.Copy(io.Discard, stdin) }()
	}
	r := s.r
	a := &attachment{out: make(chan output, attachBuffer)}
	r.mu.Lock()
	c, err := r.runningContainerLocked(containerID)
	var exited <-chan struct{}
	if err == nil {
		exited = c.exited
		if c.attached == nil {
			c.attached = map[*attachment]struct{}{}
		}
		c.attached[a] = struct{}{}
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	defer func() {
		r.mu.Lock()
		delete(c.attached, a)
		r.mu.Unlock()
	}()
	logger.V(2).Info("Attach session started", "containerID", c.id, "tty", tty)

	out := newStreamOutput(stdout, stderr, tty)
	for {
		select {
		case o := <-a.out:
			if err := out.write(o.stream, o.text); err != nil {
				return err
			}
		case <-exited:
			// Everything the program wrote was sent before exited was closed (both happen under
			// r.mu): deliver what is still buffered, then end.
			for {
				select {
				case o := <-a.out:
					if err := out.write(o.stream, o.text); err != nil {
						return err
					}
				default:
					logger.V(2).Info("Attach session ended: container exited", "containerID", c.id)
					return nil
				}
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// PortForward serves one forwarded connection to port of a READY sandbox. The fake pod has no
// network, so every port 1–65535 is an echo server: whatever the client sends comes back, until
// the client closes its side. The session also ends when the runtime stops and cuts its
// connection (the library passes context.Background() here, so there is no context to watch).
func (s *streamer) PortForward(_ context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	if err := validatePort(port); err != nil {
		return err
	}
	r := s.r
	r.mu.Lock()
	sb, err := r.readySandboxLocked(podSandboxID)
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
	r.logger.V(2).Info("Port-forward connection", "podSandboxID", sb.id, "port", port)
	// The wrappers hide ReaderFrom/WriterTo so io.Copy moves plain bytes from the stream to itself.
	if _, err := io.Copy(struct{ io.Writer }{stream}, struct{ io.Reader }{stream}); err != nil {
		return fmt.Errorf("echo on port %d: %w", port, err)
	}
	return nil
}

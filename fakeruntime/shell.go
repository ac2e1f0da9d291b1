package fakeruntime

import (
	"context"
	"errors"
	"io"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
)

// The interactive shell: `sh` with no script, on a terminal (tty.go), as `kubectl exec -it pod
// -- sh`, `kubectl run -it --image=busybox -- sh` and `kubectl debug -it` start it. It reads a
// line, runs it with the program grammar, and prompts again, like busybox's ash.

// shellPrompt is busybox's prompt (PS1 "\w \$ "): the working directory ("~" for root's home)
// and "#" for root, "$" for any other user.
func shellPrompt(cfg *runtimeapi.ContainerConfig) string {
	dir := cfg.GetWorkingDir()
	if dir == "" {
		dir = "/"
	}
	uid := cfg.GetLinux().GetSecurityContext().GetRunAsUser()
	root := uid == nil || uid.GetValue() == 0
	if root && (dir == "/root" || strings.HasPrefix(dir, "/root/")) {
		dir = "~" + strings.TrimPrefix(dir, "/root")
	}
	if root {
		return dir + " # "
	}
	return dir + " $ "
}

// interact runs the interactive shell on t (with prompt "": sh reading a script from plain
// stdin) until `exit [N]`, Ctrl-D on an empty line or the end of input, and returns its exit
// status: N, or $? (the status of the last command). Ctrl-C drops the line being typed, or
// interrupts the running command ($? 130), and prompts again. It also ends when the container
// exits (137, as execute) or ctx ends (ctx.Err()).
func (r *Runtime) interact(ctx context.Context, v view, t *terminal, prompt string, exited <-chan struct{}) (int32, error) {
	var status int32
	for {
		if err := t.showPrompt(prompt); err != nil {
			return 0, err
		}
		in, err := readInput(ctx, t, exited)
		switch {
		case errors.Is(err, errContainerExited):
			return exitCodeSIGKILL, nil
		case err != nil:
			return 0, err
		}
		switch in.kind {
		case inputInterrupt:
			if err := t.out.write(runtimeapi.Stdout, "\n"); err != nil {
				return 0, err
			}
			continue
		case inputEOF:
			if prompt == "" {
				return status, nil
			}
			return status, t.out.write(runtimeapi.Stdout, "\n")
		}
		steps, err := parseScriptSteps(in.text, unknownNotFound)
		if err != nil {
			status = 2
			if err := t.out.write(runtimeapi.Stderr, err.Error()+"\n"); err != nil {
				return 0, err
			}
			continue
		}
		p := &process{program: steps, status: status}
		code, err := r.execute(ctx, p, v, t.out, programInput{term: t}, exited, nil)
		switch {
		case errors.Is(err, errInterrupted):
			// The terminal echoed ^C; the shell goes on on a new line.
			if err := t.out.write(runtimeapi.Stdout, "\n"); err != nil {
				return 0, err
			}
		case err != nil:
			return 0, err
		case p.exited:
			return code, nil
		case isClosed(exited):
			return exitCodeSIGKILL, nil
		}
		status = code
	}
}

// errContainerExited ends a read when the container exits.
var errContainerExited = errors.New("container exited")

// readInput waits for the next line, Ctrl-C or end of input typed on t.
func readInput(ctx context.Context, t *terminal, exited <-chan struct{}) (input, error) {
	for {
		if in, ok := t.next(); ok {
			return in, nil
		}
		select {
		case <-t.queued:
		case <-t.interrupts:
			return input{kind: inputInterrupt}, nil
		case <-exited:
			return input{}, errContainerExited
		case <-ctx.Done():
			return input{}, ctx.Err()
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// runShell is the main program of a container started with stdin and a tty whose command is a
// shell (or empty: busybox's CMD is sh). It waits at its prompt for what attach sessions type;
// when it ends, so does the container, with its exit status.
func (r *Runtime) runShell(ctx context.Context, c *container, v view, t *terminal) {
	defer r.wg.Done()
	code, err := r.interact(ctx, v, t, shellPrompt(c.config), c.exited)
	if err != nil {
		return // the runtime is stopping
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exitLocked(c, code, reasonFor(code), "") // nothing if StopContainer ended it
}

// lockedContainerOutput is a container's output written from outside the runtime's lock. Once
// the container has exited, what is still typed is not echoed: its log may be gone.
type lockedContainerOutput struct {
	r *Runtime
	c *container
}

func (o lockedContainerOutput) write(stream runtimeapi.LogStreamType, text string) error {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	if o.c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil
	}
	return containerOutput(o).write(stream, text)
}

// typeInto sends what a client types on stdin to t until stdin ends (the client closed it, or the
// connection closed). With closeAfter, the end of this client's stdin ends t's input: the
// container's StdinOnce, and every exec.
func typeInto(logger klog.Logger, stdin io.Reader, t *terminal, closeAfter bool) {
	buf := make([]byte, 1024)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if werr := t.feed(buf[:n]); werr != nil {
				logger.V(4).Info("Terminal output gone", "err", werr)
				break
			}
		}
		if err != nil {
			break
		}
	}
	if closeAfter {
		t.closeInput()
	}
}

// resizeTerminal hands the client's terminal size changes to t, until the session ends and the
// streaming server closes the channel.
func resizeTerminal(logger klog.Logger, resize <-chan remotecommand.TerminalSize, t *terminal) {
	for size := range resize {
		logger.V(5).Info("Terminal resized", "width", size.Width, "height", size.Height)
		if err := t.resize(size.Width, size.Height); err != nil {
			logger.V(4).Info("Terminal output gone", "err", err)
		}
	}
}

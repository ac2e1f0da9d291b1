package fake

import (
	"context"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A fake process is a program (program.go) run in turns by one interpreter, runSteps; doc.go's
// "Container programs" shows who waits, and how, between turns.

// sink is where a program's output goes. write fails when the reader has gone (an exec client
// hung up); the program then ends with that error.
type sink interface {
	write(stream runtimeapi.LogStreamType, text string) error
}

// runSteps runs program from step pc until a step must wait or the program ends, and returns the
// next pc and that step: stepSleep, stepForever, stepStdin, or stepExit with the exit code (after
// the last step, or after an inspection command that failed).
func runSteps(program []step, pc int, v view, out sink) (int, step, error) {
	for pc < len(program) {
		st := program[pc]
		pc++
		switch st.kind {
		case stepEcho:
			text := st.text
			if !st.noEOL {
				text += "\n"
			}
			if err := out.write(st.stream, text); err != nil {
				return pc, step{}, err
			}
		case stepInspect:
			stdout, stderr, code := inspect(v, st.argv[0], st.argv[1:])
			for _, o := range []output{{runtimeapi.Stdout, stdout}, {runtimeapi.Stderr, stderr}} {
				if o.text == "" {
					continue
				}
				if err := out.write(o.stream, o.text); err != nil {
					return pc, step{}, err
				}
			}
			if code != 0 {
				return pc, step{kind: stepExit, code: code}, nil
			}
		default: // sleep, forever, stdin, exit
			return pc, st, nil
		}
	}
	return pc, step{kind: stepExit}, nil
}

// containerOutput is the sink of a container's main program: its log file and its attach
// sessions. It never fails: a log write error is logged and the program goes on.
type containerOutput struct {
	r *Runtime
	c *container
}

func (o containerOutput) write(stream runtimeapi.LogStreamType, text string) error {
	if err := appendLog(o.c.logPath, formatLogLines(o.r.clock.Now(), stream, text)); err != nil {
		o.r.logger.Error(err, "Could not write container log", "containerID", o.c.id)
	}
	// Attach sessions get the text without blocking the program: a full buffer misses it.
	for a := range o.c.attached {
		select {
		case a <- output{stream: stream, text: text}:
		default:
			o.r.logger.V(4).Info("Attach session too slow, output dropped", "containerID", o.c.id)
		}
	}
	return nil
}

// advanceLocked runs one turn of c's main program, from its program counter until it sleeps,
// blocks until stopped or exits. A sleep arms a timer whose callback runs the next turn.
func (r *Runtime) advanceLocked(c *container) {
	for {
		var stop step
		c.pc, stop, _ = runSteps(c.program, c.pc, r.viewLocked(c), containerOutput{r: r, c: c})
		switch stop.kind {
		case stepStdin:
			continue // a container has no stdin: cat reads nothing and the program goes on
		case stepExit:
			r.exitLocked(c, stop.code, reasonFor(stop.code), "")
		case stepSleep:
			r.wg.Add(1) // Done when the timer is stopped, or after resume
			c.timer = r.clock.AfterFunc(stop.d, func() {
				// A fake clock calls this with its lock held: resume on another goroutine.
				go func() {
					defer r.wg.Done()
					r.resume(c.id)
				}()
			})
		}
		return // stepForever: until StopContainer, RemoveContainer or a fault
	}
}

// resume runs the next turn after a sleep, unless the container exited meanwhile.
func (r *Runtime) resume(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.containers[id]
	if c == nil || c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || r.stopped {
		return
	}
	c.timer = nil
	r.advanceLocked(c)
}

// viewLocked is what the container's inspection commands see.
func (r *Runtime) viewLocked(c *container) view {
	v := view{env: c.config.GetEnvs(), mounts: c.config.GetMounts()}
	if s := r.sandboxes[c.sandboxID]; s != nil {
		v.hostname = s.config.GetHostname()
	}
	return v
}

// exitLocked ends a RUNNING container's process with code. Exec sessions in it end (exited is
// closed) and so do attach sessions, once they have sent what they hold.
func (r *Runtime) exitLocked(c *container, code int32, reason, message string) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	r.stopTimerLocked(c)
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
	c.finished = r.clock.Now()
	c.exitCode, c.reason, c.message = code, reason, message
	close(c.exited)
	for a := range c.attached {
		close(a)
	}
	c.attached = nil
	r.logger.V(2).Info("Container exited", "containerID", c.id, "exitCode", code, "reason", reason)
	r.publishLocked(c.id, r.sandboxes[c.sandboxID], runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
}

func (r *Runtime) stopTimerLocked(c *container) {
	if c.timer != nil && c.timer.Stop() {
		r.wg.Done() // the callback will never run
	}
	c.timer = nil
}

// reasonFor is the reason containerd reports for an exit code.
func reasonFor(code int32) string {
	if code == 0 {
		return "Completed"
	}
	return "Error"
}

// execute runs an exec'd program to its end and returns its exit code. Unlike the main program it
// blocks: a sleep waits on the runtime's clock and `cat` copies stdin (nil: none) to stdout. A
// wait ends early when the container exits (exit code 137: the exec'd process dies with the
// container's PID namespace, by SIGKILL), when deadline fires (context.DeadlineExceeded) or when
// ctx ends (ctx.Err()). exited and deadline may be nil.
func (r *Runtime) execute(ctx context.Context, program []step, v view, out sink, stdin io.Reader, exited <-chan struct{}, deadline <-chan time.Time) (int32, error) {
	for pc := 0; ; {
		var stop step
		var err error
		if pc, stop, err = runSteps(program, pc, v, out); err != nil {
			return 0, err
		}
		var timer <-chan time.Time // what this step waits for; both nil: until stopped
		var copied chan error
		switch stop.kind {
		case stepExit:
			return stop.code, nil
		case stepSleep:
			t := r.clock.NewTimer(stop.d)
			defer t.Stop() // only the last timer can still be pending on return
			timer = t.C()
		case stepStdin:
			if stdin == nil {
				continue // like `cat </dev/null`
			}
			// On its own goroutine, so the wait can end first; it ends when the server closes
			// the connection.
			copied = make(chan error, 1)
			go func() {
				_, err := io.Copy(sinkWriter{out, runtimeapi.Stdout}, stdin)
				copied <- err
			}()
		}
		select {
		case <-timer:
		case err := <-copied:
			if err != nil {
				return 0, err
			}
		case <-exited:
			return exitCodeSIGKILL, nil
		case <-deadline:
			return 0, context.DeadlineExceeded
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// sinkWriter is one stream of a sink as an io.Writer.
type sinkWriter struct {
	out    sink
	stream runtimeapi.LogStreamType
}

func (w sinkWriter) Write(p []byte) (int, error) {
	if err := w.out.write(w.stream, string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

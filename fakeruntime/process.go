package fakeruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A fake process is a program (program.go) run in turns by one interpreter, process.run; doc.go's
// "Container programs" shows who waits, and how, between turns.

// sink is where a program's output goes. write fails when the reader has gone (an exec client
// hung up); the program then ends with that error.
type sink interface {
	write(stream runtimeapi.LogStreamType, text string) error
}

// process is a running program: its steps, the next one, and the exit status of the last
// command it ran (the shell's $?).
type process struct {
	program []step
	pc      int
	status  int32
	exited  bool              // it ran `exit`: the interactive shell ends too
	vars    map[string]string // the shell's variables (the environment is read through them)
	fors    map[int]*forIter  // the for loops running, by the index of their step
	jumps   int               // jumps since the program last waited: a busy loop pauses (maxJumps)
	piped   *string           // what the command before "|" printed: the next command's stdin
	skipped bool              // the command before "|" did not run: neither does the next
	cwd     string            // the directory cd went to ("": the container's working directory)
	follow  *following        // the tail -f that runs, if one does
}

// following is a running tail -f: the step that runs it, the file it follows and how much of
// the file it printed.
type following struct {
	pc     int
	file   string // absolute
	offset int
}

// followPoll is how often tail -f looks for more of its file.
const followPoll = time.Second

// forIter is a running for loop: its words, expanded when it started, and the next one.
type forIter struct {
	words []string
	next  int
}

// A loop that never waits would hold the runtime's lock forever: after maxJumps jumps without a
// wait, the program pauses for busyLoopPause (a sleep), so every loop is interruptible and ends
// with the container.
const (
	maxJumps      = 100
	busyLoopPause = 100 * time.Millisecond
)

// run runs the process from its pc until a step must wait or the program ends, and returns that
// step — stepSleep, stepForever, stepStdin, stepServe, stepAlloc, stepBurn, or stepExit with the
// exit code; a busy loop's pause is a stepSleep — and the sink its output goes to (its
// redirections applied). The caller waits, or serves, and sets
// p.status before it runs the process again.
func (p *process) run(v view, out sink) (step, sink, error) {
	for p.pc < len(p.program) {
		st, ok := p.next(v)
		if !ok {
			continue // `a && b` with a failed, `a || b` with a succeeded: $? stays
		}
		v, st := p.enter(v, st)
		st, done, err := p.control(st, v, out)
		switch {
		case err != nil:
			return step{}, nil, err
		case done && p.jumps >= maxJumps:
			p.jumps = 0
			return step{kind: stepSleep, d: busyLoopPause}, out, nil
		case done:
			continue
		}
		o, err := redirectOutput(v.fs, out, st.redirs)
		if err != nil {
			if err := out.write(runtimeapi.Stderr, "sh: "+err.Error()+"\n"); err != nil {
				return step{}, nil, err
			}
			p.status = 1
			continue
		}
		var pipe *pipeSink
		if st.pipe {
			pipe = &pipeSink{base: o}
			o = pipe
		}
		last := p.status
		p.status = 0
		var outputs []output
		switch st.kind {
		case stepEcho:
			text := st.text
			if !st.noEOL {
				text += "\n"
			}
			outputs = []output{{runtimeapi.Stdout, text}}
		case stepBuiltin:
			if st.argv[0] == "cd" {
				outputs, p.status = p.cd(v, st.argv[1:])
				break
			}
			stdout, stderr, code := runBuiltin(v, st.argv)
			outputs, p.status = []output{{runtimeapi.Stdout, stdout}, {runtimeapi.Stderr, stderr}}, code
		case stepFail:
			outputs, p.status = []output{{runtimeapi.Stderr, st.text + "\n"}}, st.code
		case stepExit:
			code := st.code
			if st.lastStatus {
				code = last
			}
			p.exited = true
			return step{kind: stepExit, code: code}, o, say(o, runtimeapi.Stderr, st.text)
		case stepSleep, stepForever, stepStdin:
			if !st.bg {
				p.jumps = 0
				return st, o, say(o, runtimeapi.Stderr, st.text) // an unknown command says so
			}
			// In the background they do nothing anyone waits for, and $? is 0.
		case stepServe, stepAlloc, stepBurn:
			return st, o, say(o, runtimeapi.Stdout, st.text) // stress says what it starts
		}
		if err := p.emit(o, outputs); err != nil {
			return step{}, nil, err
		}
		if pipe != nil {
			p.piped = &pipe.stdout
		}
		if st.hold && !st.bg { // tail -f: look for more of the file after a pause
			p.jumps = 0
			p.followFrom(v, st)
			return step{kind: stepSleep, d: followPoll}, o, nil
		}
	}
	return step{kind: stepExit, code: p.status}, out, nil
}

// next takes the step at pc and says whether it runs: not if its condition does not hold on $?,
// nor the right side of a pipe whose left side did not run. A tail -f that follows a file runs
// again, as an echo of what the file got since it last looked.
func (p *process) next(v view) (step, bool) {
	st := p.program[p.pc]
	p.pc++
	if f := p.follow; f != nil && f.pc == p.pc-1 {
		data, _ := v.fs.readFile(f.file)
		if len(data) < f.offset { // truncated: tail starts over
			f.offset = 0
		}
		text := string(data[f.offset:])
		f.offset = len(data)
		return step{kind: stepEcho, text: text, noEOL: true, hold: true, redirs: st.redirs, pipe: st.pipe}, true
	}
	if !st.cond.holds(p.status) || p.skipped {
		p.skipped = st.pipe
		return st, false
	}
	return st, true
}

// followFrom makes the tail -f step st, which just printed, run again after the pause: the
// first time, it follows its (last) file from the file's end.
func (p *process) followFrom(v view, st step) {
	p.pc--
	if p.follow != nil && p.follow.pc == p.pc {
		return
	}
	file := st.argv[len(st.argv)-1]
	data, _ := v.fs.readFile(file)
	p.follow = &following{pc: p.pc, file: v.fs.abs(file), offset: len(data)}
}

// enter is the view and the step a command runs with: from the directory cd went to, and with
// what the command before "|" printed as its stdin (cat without files then reads it).
func (p *process) enter(v view, st step) (view, step) {
	if p.cwd != "" {
		v.fs = v.fs.in(p.cwd)
	}
	if p.piped != nil {
		v.stdin, p.piped = *p.piped, nil
		if st.kind == stepStdin { // cat copies it
			st = step{kind: stepEcho, text: v.stdin, noEOL: true, cond: st.cond, redirs: st.redirs, pipe: st.pipe}
		}
	}
	return v, st
}

// emit writes a command's outputs to o; when a write to a redirected file failed, $? is 1.
func (p *process) emit(o sink, outputs []output) error {
	for _, w := range outputs {
		if w.text == "" {
			continue
		}
		if err := o.write(w.stream, w.text); err != nil {
			return err
		}
	}
	if f, ok := o.(*fileOutput); ok && f.failed {
		p.status = 1
	}
	return nil
}

// cd changes the directory the process's relative paths start from (busybox's words and status
// 2 if it cannot); without an argument it goes to /root, root's $HOME.
func (p *process) cd(v view, args []string) ([]output, int32) {
	dir := "/root"
	if len(args) > 0 {
		dir = args[0]
	}
	kind, err := v.fs.stat(dir)
	switch {
	case err != nil:
		return []output{{runtimeapi.Stderr, fmt.Sprintf("sh: cd: can't cd to %s: %s\n", dir, errText(err))}}, 2
	case kind != kindDir:
		return []output{{runtimeapi.Stderr, fmt.Sprintf("sh: cd: can't cd to %s: Not a directory\n", dir)}}, 2
	}
	p.cwd = v.fs.abs(dir)
	return nil, 0
}

// pipeSink keeps a command's stdout for the command after "|"; its stderr goes on to base.
type pipeSink struct {
	base   sink
	stdout string
}

func (s *pipeSink) write(stream runtimeapi.LogStreamType, text string) error {
	if stream == runtimeapi.Stdout {
		s.stdout += text
		return nil
	}
	return s.base.write(stream, text)
}

// say writes a step's message, if it has one, as a line.
func say(o sink, stream runtimeapi.LogStreamType, text string) error {
	if text == "" {
		return nil
	}
	return o.write(stream, text+"\n")
}

// control runs the steps of control flow, variables and expansion (compile.go, expand.go): a
// jump, a for loop's next word, an assignment (done is true: the step is over), or a command with
// expansions, which becomes the command it expands to (done is false: run it).
func (p *process) control(st step, v view, out sink) (step, bool, error) {
	e := expander{p: p, v: v, stderr: out}
	switch st.kind {
	case stepJump:
		p.pc = st.target
		p.jumps++
		return st, true, nil
	case stepFor:
		return st, true, p.forNext(st, e)
	case stepForDone:
		delete(p.fors, st.target)
		p.status = 0
		return st, true, nil
	case stepAssign:
		p.status = 0
		for _, a := range st.argv {
			name, val, _ := strings.Cut(a, "=")
			f, err := e.word(val, false)
			if err != nil {
				return st, true, p.expansionFailed(out, err)
			}
			p.setVar(name, f[0])
		}
		return st, true, nil
	case stepExpand:
		words, err := e.words(st.argv)
		if err != nil {
			return st, true, p.expansionFailed(out, err)
		}
		ex := parseCommand(words, st.mode)
		ex.cond, ex.redirs, ex.bg, ex.pipe = st.cond, st.redirs, ex.bg || st.bg, st.pipe
		return ex, false, nil
	}
	return st, false, nil
}

// forNext puts the next word of the for loop at p.pc-1 into its variable, or ends the loop.
func (p *process) forNext(st step, e expander) error {
	key := p.pc - 1
	it := p.fors[key]
	if it == nil {
		words, err := e.words(st.argv)
		if err != nil {
			p.pc = st.target
			return p.expansionFailed(e.stderr, err)
		}
		it = &forIter{words: words}
		if p.fors == nil {
			p.fors = map[int]*forIter{}
		}
		p.fors[key] = it
	}
	if it.next == len(it.words) {
		delete(p.fors, key)
		p.pc = st.target
		return nil
	}
	p.setVar(st.name, it.words[it.next])
	it.next++
	p.jumps++
	return nil
}

func (p *process) setVar(name, val string) {
	if p.vars == nil {
		p.vars = map[string]string{}
	}
	p.vars[name] = val
}

// expansionFailed prints why an expansion failed ("divide by zero"); $? is 2, as in sh.
func (p *process) expansionFailed(out sink, err error) error {
	p.status = 2
	return out.write(runtimeapi.Stderr, err.Error()+"\n")
}

// fileOutput is a sink with a command's redirections applied: each stream goes to a file of the
// container, to the other stream, to the original sink, or nowhere (/dev/null).
type fileOutput struct {
	base   sink
	fs     *rootfs
	target [3]redirect // by descriptor (1, 2): file "" and to = the original stream
	failed bool        // a write to a file failed: the command's status becomes 1
}

// redirectOutput applies redirections left to right, as the shell does: "> F" truncates F at
// once, so a command that prints nothing still leaves it empty. The error reads like sh's.
func redirectOutput(fs *rootfs, base sink, redirs []redirect) (sink, error) {
	if len(redirs) == 0 {
		return base, nil
	}
	o := &fileOutput{base: base, fs: fs}
	o.target[1], o.target[2] = redirect{to: 1}, redirect{to: 2}
	for _, r := range redirs {
		if r.file == "" {
			o.target[r.fd] = o.target[r.to]
			continue
		}
		if err := fs.writeFile(r.file, nil, r.appendTo); errors.Is(err, syscall.ENOENT) {
			return nil, fmt.Errorf("can't create %s: nonexistent directory", r.file) // busybox's words
		} else if err != nil {
			return nil, fmt.Errorf("can't create %s: %s", r.file, errText(err))
		}
		o.target[r.fd] = redirect{file: r.file}
	}
	return o, nil
}

func (o *fileOutput) write(stream runtimeapi.LogStreamType, text string) error {
	t := o.target[1]
	if stream == runtimeapi.Stderr {
		t = o.target[2]
	}
	switch {
	case t.file == "" && t.to == 2:
		return o.base.write(runtimeapi.Stderr, text)
	case t.file == "":
		return o.base.write(runtimeapi.Stdout, text)
	}
	if err := o.fs.writeFile(t.file, []byte(text), true); err != nil {
		o.failed = true
		return o.base.write(runtimeapi.Stderr, fmt.Sprintf("sh: write error: %s\n", errText(err)))
	}
	return nil
}

// containerOutput is the sink of a container's main program: its log file and its attach
// sessions. It never fails: a log write error is logged and the program goes on.
type containerOutput struct {
	r *Runtime
	c *container
}

func (o containerOutput) write(stream runtimeapi.LogStreamType, text string) error {
	if o.c.partial == nil {
		o.c.partial = map[runtimeapi.LogStreamType]string{}
	}
	text = o.c.partial[stream] + text
	end := strings.LastIndexByte(text, '\n') + 1
	o.c.partial[stream] = text[end:]
	if end > 0 {
		o.r.appendLogLocked(o.c, stream, text[:end])
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

// appendLogLocked writes text, whole lines, to c's log.
func (r *Runtime) appendLogLocked(c *container, stream runtimeapi.LogStreamType, text string) {
	if err := appendLog(c.logPath, formatLogLines(r.clock.Now(), stream, text)); err != nil {
		r.logger.Error(err, "Could not write container log", "containerID", c.id)
	}
}

// advanceLocked runs one turn of c's main program, from its program counter until it sleeps,
// serves in the foreground, blocks until stopped or exits. A sleep arms a timer whose callback
// runs the next turn.
func (r *Runtime) advanceLocked(c *container) {
	for {
		stop, out, _ := c.proc.run(r.viewLocked(c), containerOutput{r: r, c: c})
		switch stop.kind {
		case stepStdin:
			continue // a container has no stdin: cat reads nothing and the program goes on
		case stepServe:
			if !r.serveLocked(c, stop.serve, out) || stop.bg {
				continue // failed ($? is 1), or serving in the background
			}
		case stepAlloc, stepBurn:
			if r.useLocked(c, stop) && !stop.hold {
				continue
			}
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
		return // stepForever, serve, OOM-killed: until StopContainer, RemoveContainer or a fault
	}
}

// serveLocked starts a server of c's main program; it stops when c exits. If it cannot, the
// program's stderr says why and $? is 1.
func (r *Runtime) serveLocked(c *container, spec *serveSpec, out sink) bool {
	srv, err := listen(spec, r.viewLocked(c))
	if err != nil {
		_ = out.write(runtimeapi.Stderr, err.Error()+"\n")
		c.proc.status = 1
		return false
	}
	r.addListenerLocked(srv)
	c.servers = append(c.servers, srv)
	r.logger.V(2).Info("Container serving", "containerID", c.id, "address", srv.addr, "serve", spec.String())
	return true
}

func (r *Runtime) addListenerLocked(srv *server) {
	r.listeners[srv.addr] = srv
	r.reachable.Store(srv.addr, true)
}

func (r *Runtime) removeListenerLocked(srv *server) {
	delete(r.listeners, srv.addr)
	r.reachable.Delete(srv.addr)
}

// stopServersLocked stops the servers of c's main program.
func (r *Runtime) stopServersLocked(c *container) {
	for _, srv := range c.servers {
		r.removeListenerLocked(srv)
		srv.stop()
	}
	c.servers = nil
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

// viewLocked is what the container's commands see.
func (r *Runtime) viewLocked(c *container) view {
	v := view{env: c.config.GetEnvs(), fs: c.fs, now: r.clock.Now, user: c.config.GetLinux().GetSecurityContext(), reachable: func(a netip.AddrPort) bool {
		_, ok := r.reachable.Load(a)
		return ok
	}}
	if s := r.sandboxes[c.sandboxID]; s != nil {
		v.hostname = s.config.GetHostname()
		v.serveIP = s.serveIP()
		// containerd puts HOSTNAME in every container's environment unless the config has it.
		if v.hostname != "" && !slices.ContainsFunc(v.env, func(kv *runtimeapi.KeyValue) bool { return kv.GetKey() == "HOSTNAME" }) {
			v.env = append([]*runtimeapi.KeyValue{{Key: "HOSTNAME", Value: []byte(v.hostname)}}, v.env...)
		}
	}
	return v
}

// exitLocked ends a RUNNING container's process with code. Its servers stop; exec sessions in it
// end (exited is closed) and so do attach sessions, once they have sent what they hold.
func (r *Runtime) exitLocked(c *container, code int32, reason, message string) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return
	}
	r.stopTimerLocked(c)
	r.stopServersLocked(c)
	for _, stream := range []runtimeapi.LogStreamType{runtimeapi.Stdout, runtimeapi.Stderr} {
		if c.partial[stream] != "" { // the last line had no newline: containerd writes it at exit
			r.appendLogLocked(c, stream, c.partial[stream])
		}
	}
	c.partial = nil
	c.finished = r.clock.Now()
	c.markCPU(c.finished) // CPU time stops growing, and the memory is freed
	c.use.allocated = 0
	c.state = runtimeapi.ContainerState_CONTAINER_EXITED
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

// programInput is what an exec'd program reads: nothing (both nil), the client's stdin (exec -i)
// or a terminal (exec -it).
type programInput struct {
	stdin io.Reader
	term  *terminal
}

// errInterrupted ends a program the user interrupted with Ctrl-C on its terminal.
var errInterrupted = errors.New("interrupted")

// exitCodeSIGINT is the exit code of a process ended by Ctrl-C.
const exitCodeSIGINT int32 = 128 + 2

// execute runs an exec'd program to its end and returns its exit code. Unlike the main program it
// blocks: a sleep waits on the runtime's clock, `cat` copies its input to stdout, and a server
// runs until the program ends. A wait ends early when the container exits (exit code 137: the
// exec'd process dies with the container's PID namespace, by SIGKILL), when Ctrl-C is typed on
// the terminal (errInterrupted), when deadline fires (context.DeadlineExceeded) or when ctx
// ends (ctx.Err()). exited and deadline may be nil.
func (r *Runtime) execute(ctx context.Context, p *process, v view, out sink, in programInput, exited <-chan struct{}, deadline <-chan time.Time) (int32, error) {
	var servers []*server
	defer func() {
		r.mu.Lock()
		for _, srv := range servers {
			r.removeListenerLocked(srv)
		}
		r.mu.Unlock()
		for _, srv := range servers {
			srv.stop()
		}
	}()
	for {
		stop, o, err := p.run(v, out)
		if err != nil {
			return 0, err
		}
		var w stepWait
		switch stop.kind {
		case stepExit:
			return stop.code, nil
		case stepAlloc, stepBurn:
			if !stop.hold {
				continue // an exec'd process's usage ends with it; only the main program's counts
			}
		case stepServe:
			srv, err := listen(stop.serve, v)
			if err != nil {
				if err := o.write(runtimeapi.Stderr, err.Error()+"\n"); err != nil {
					return 0, err
				}
				p.status = 1
				continue
			}
			servers = append(servers, srv)
			r.mu.Lock()
			r.addListenerLocked(srv)
			r.mu.Unlock()
			if stop.bg {
				continue
			}
		case stepSleep:
			t := r.clock.NewTimer(stop.d)
			defer t.Stop() // only the last timer can still be pending on return
			w.timer = t.C()
		case stepStdin:
			switch {
			case in.term != nil:
				w.typed = in.term.queued // cat reads the lines typed, until Ctrl-D
			case in.stdin != nil:
				// On its own goroutine, so the wait can end first; it ends when the server
				// closes the connection.
				copied := make(chan error, 1)
				go func() {
					_, err := io.Copy(sinkWriter{o, runtimeapi.Stdout}, in.stdin)
					copied <- err
				}()
				w.copied = copied
			default:
				continue // like `cat </dev/null`
			}
		}
		if end, code, err := w.wait(ctx, in.term, o, exited, deadline); end {
			return code, err
		}
	}
}

// stepWait is what one step of an exec'd program waits for; a nil channel never fires, and when
// all are nil the step waits until the program is stopped.
type stepWait struct {
	timer  <-chan time.Time // sleep
	copied chan error       // cat copying stdin: its end
	typed  <-chan struct{}  // cat on a terminal: lines were typed
}

// wait waits until the step is done, or until the program must end: then end is true, with its
// exit code or error (see execute).
func (w stepWait) wait(ctx context.Context, term *terminal, o sink, exited <-chan struct{}, deadline <-chan time.Time) (end bool, code int32, err error) {
	var interrupts <-chan struct{}
	if term != nil {
		interrupts = term.interrupts
	}
	for {
		if w.typed != nil {
			ended, err := catLines(term, o)
			if err != nil || ended {
				return err != nil, 0, err
			}
		}
		select {
		case <-w.timer:
			return false, 0, nil
		case <-w.typed: // catLines takes what was typed
		case err := <-w.copied:
			return err != nil, 0, err
		case <-interrupts:
			return true, exitCodeSIGINT, errInterrupted
		case <-exited:
			return true, exitCodeSIGKILL, nil
		case <-deadline:
			return true, 0, context.DeadlineExceeded
		case <-ctx.Done():
			return true, 0, ctx.Err()
		}
	}
}

// catLines is `cat` on a terminal: it writes back each line typed so far and says whether the
// input has ended (Ctrl-D on an empty line).
func catLines(t *terminal, out sink) (bool, error) {
	for {
		in, ok := t.next()
		switch {
		case !ok:
			return false, nil
		case in.kind == inputEOF:
			return true, nil
		}
		if err := out.write(runtimeapi.Stdout, in.text+"\n"); err != nil {
			return false, err
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

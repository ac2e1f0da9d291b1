package tour

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// Generous upper bounds, not assertions on speed: a reader waits and types a command again
// (`kubectl exec` before the pods run, `kubectl top` before metrics-server's first scrape).
const (
	startTimeout   = 15 * time.Minute // `make run` to its banner: a cold cache builds the control plane
	commandTimeout = 2 * time.Minute  // one run of one command
	retryFor       = 3 * time.Minute  // a command that fails (or does not show its promise yet) is typed again
)

// TestReadmeTour runs the README's set-up and tour (see the package comment).
func TestReadmeTour(t *testing.T) {
	blocks := readmeBlocks(t)
	top := scratchTop(t)
	sh := &shell{dir: top, env: readerEnv()}
	run := startMakeRun(t, sh)
	for _, b := range blocks {
		if b.when == terminal2 {
			sh.runBlock(t, b)
		}
	}
	run.stop(t) // Ctrl-C
	for _, b := range blocks {
		if b.when == afterStop {
			sh.runBlock(t, b)
		}
	}
	if out, err := sh.output(context.Background(), "make cluster-down"); err != nil {
		t.Errorf("make cluster-down: %v\n%s", err, out)
	}
}

// scratchTop is a top directory for the reader's commands: the repository's Makefile, hack/ and
// labs/ linked in, bin/minikubelet (what `make run` builds) and an empty _output/. Cleanup stops
// what `make run` left running there (`make cluster-down`) and removes it.
func scratchTop(t *testing.T) string {
	top, err := os.MkdirTemp("", "minikubelet-e2e-tour-") // short: sockets live under _output/run
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Makefile", "hack", "labs"} {
		if err := os.Symlink(filepath.Join(framework.RepoRoot(), name), filepath.Join(top, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(top, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(minikubelet, filepath.Join(top, "bin", "minikubelet")); err != nil {
		t.Fatalf("put minikubelet in bin/: %v", err)
	}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(top, "_output", "cluster", "state.json")); err == nil {
			cmd := exec.Command("make", "cluster-down")
			cmd.Dir = top
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("make cluster-down (cleanup): %v\n%s", err, out)
			}
		}
		os.RemoveAll(top)
	})
	return top
}

// readerEnv is the test's environment without what would move the README's places (hack/run.sh's
// and labs/env.sh's variables), as in a reader's fresh terminal.
func readerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "CLUSTER", "CLUSTER_DIR", "ROOT_DIR", "NODE_NAME", "NODE_IP", "KUBELET_ADDRESS", "KUBELET_PORT",
			"DEBUG_ADDRESS", "METRICS_SERVER", "ARGS", "MINIKUBELET_CMD", "KUBECONFIG", "CRI_ENDPOINT", "TERM":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TERM=xterm")
}

// makeRun is terminal 1: `make run`, in a process group of its own.
type makeRun struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// startMakeRun runs `make -o build run` (make run without rebuilding bin/minikubelet) and waits
// for its banner ("In another terminal: …"). Cleanup stops it as Ctrl-C does if it still runs.
func startMakeRun(t *testing.T, sh *shell) *makeRun {
	r := &makeRun{cmd: exec.Command("make", "-o", "build", "run"), out: &syncBuffer{}, done: make(chan struct{})}
	r.cmd.Dir, r.cmd.Env = sh.dir, sh.env
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("make run: %v", err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.interrupt()
		if t.Failed() {
			t.Logf("--- terminal 1 (make run):\n%s", r.out.String())
		}
	})
	deadline := time.Now().Add(startTimeout)
	for !strings.Contains(r.out.String(), "In another terminal:") {
		select {
		case <-r.done:
			t.Fatalf("make run exited before its banner:\n%s", r.out.String())
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner from make run within %s:\n%s", startTimeout, r.out.String())
		}
	}
	t.Logf("terminal 1: make run:\n%s", r.out.String())
	return r
}

// interrupt sends SIGINT to make run's process group, as Ctrl-C in its terminal does, and waits
// for make to exit; SIGKILL to the group if it has not after a minute.
func (r *makeRun) interrupt() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
}

// stop is Ctrl-C in terminal 1. minikubelet is built with -race: its output must hold no race report.
func (r *makeRun) stop(t *testing.T) {
	t.Helper()
	r.interrupt()
	out := r.out.String()
	if strings.Contains(out, "WARNING: DATA RACE") {
		t.Errorf("minikubelet reported a data race (built with -race):\n%s", out)
	}
	t.Logf("terminal 1 after Ctrl-C:\n%s", lastLines(out, 4))
}

// shell is terminal 2: bash in the top directory; every command runs after the `source` lines
// run before it (`source labs/env.sh`), as in one terminal.
type shell struct {
	dir     string
	env     []string
	sourced []string
}

func (s *shell) command(ctx context.Context, cmd string) *exec.Cmd {
	script := "set -eo pipefail\n"
	if len(s.sourced) > 0 {
		script += "{\n" + strings.Join(s.sourced, "\n") + "\n} >/dev/null\n"
	}
	c := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script+cmd+"\n")
	c.Dir, c.Env = s.dir, s.env
	return c
}

// output runs cmd to its end (at most commandTimeout), killing its process group on timeout.
func (s *shell) output(ctx context.Context, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	c := s.command(ctx, cmd)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	out, err := c.CombinedOutput()
	return string(out), err
}

// runBlock runs each command of b until it exits 0 and shows what the README promises, typing
// it again every 2 s for up to retryFor.
func (s *shell) runBlock(t *testing.T, b block) {
	t.Helper()
	for _, c := range b.commands {
		start, cmd := time.Now(), c.text
		var out string
		var err error
		for attempt := 1; ; attempt++ {
			if interactive(cmd) {
				out, err = s.typeInto(cmd)
			} else {
				out, err = s.output(context.Background(), cmd)
			}
			if promise := promises[withoutComment(cmd)]; err == nil && promise != nil {
				err = promise(out)
			}
			if err == nil {
				t.Logf("README.md:%d $ %s\n(attempt %d, %s)\n%s", c.line, cmd, attempt, time.Since(start).Round(time.Second), clip(out))
				break
			}
			if time.Since(start) > retryFor {
				t.Fatalf("README.md:%d $ %s\nstill fails after %d attempts in %s: %v\n%s", c.line, cmd, attempt, retryFor, err, out)
			}
			time.Sleep(2 * time.Second)
		}
		if strings.HasPrefix(cmd, "source ") {
			s.sourced = append(s.sourced, cmd)
		}
	}
}

// typeInto runs an interactive command on a pseudo-terminal and types what typed says.
func (s *shell) typeInto(cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	term, err := framework.StartOnTerminal(s.command(ctx, cmd))
	if err != nil {
		return "", err
	}
	seen := 0
	for _, k := range typed[withoutComment(cmd)] {
		screen, err := term.WaitFor(seen, k.after, time.Minute)
		if err == nil {
			seen, err = len(screen), term.Type(k.keys)
		}
		if err != nil {
			_ = term.Wait(0)
			return term.String(), err
		}
	}
	err = term.Wait(time.Minute)
	return term.String(), err
}

// syncBuffer is a bytes.Buffer that a process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// clip keeps a command's output readable in the test log.
func clip(out string) string {
	const max = 3000
	if len(out) > max {
		return out[:max] + "\n[… clipped]"
	}
	return out
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}

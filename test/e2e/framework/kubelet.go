package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildMinikubelet compiles ./cmd/minikubelet into dir, with the race detector, and returns the
// binary's path. Every process a test starts from it is checked for data races when it ends
// (StartProcess), so the e2e tests are race tests of the whole kubelet too.
func BuildMinikubelet(dir string) (string, error) {
	bin := filepath.Join(dir, "minikubelet")
	cmd := exec.Command("go", "build", "-race", "-o", bin, "./cmd/minikubelet")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/minikubelet: %v\n%s", err, out)
	}
	return bin, nil
}

// Process is a minikubelet run as a real child process. Its output goes to a log file that is
// printed when the test fails; it is killed (by PID) when the test ends.
type Process struct {
	Cmd     *exec.Cmd
	LogPath string

	done    chan struct{}
	mu      sync.Mutex
	waitErr error
}

// StartProcess starts bin with args. The process is SIGKILLed at the end of the test (and dies if
// the test process dies).
func StartProcess(t *testing.T, bin string, args ...string) *Process {
	t.Helper()
	logFile, err := os.CreateTemp(t.TempDir(), "minikubelet-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	logFile.Close()
	p := &Process{Cmd: cmd, LogPath: logFile.Name(), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT) // in case a test left it stopped
		_ = cmd.Process.Kill()
		<-p.done
		if log := p.Log(); strings.Contains(log, raceReport) {
			t.Errorf("%s reported a data race (built with -race):\n%s", filepath.Base(bin), log)
			return
		}
		if t.Failed() {
			t.Logf("--- log of %s %s:\n%s", filepath.Base(bin), strings.Join(args, " "), p.Log())
		}
	})
	return p
}

// raceReport starts every report of the race detector.
const raceReport = "WARNING: DATA RACE"

// Log returns everything the process printed so far.
func (p *Process) Log() string {
	data, _ := os.ReadFile(p.LogPath)
	return string(data)
}

// Signal sends sig to the process.
func (p *Process) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit code.
func (p *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		return -1, fmt.Errorf("still running after %s", timeout)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var exitErr *exec.ExitError
	if errors.As(p.waitErr, &exitErr) {
		return exitErr.ExitCode(), nil
	}
	if p.waitErr != nil {
		return -1, p.waitErr
	}
	return 0, nil
}

// RunToExit runs bin with args and returns its exit code and combined output; it fails the test if
// the process does not exit within timeout.
func RunToExit(t *testing.T, timeout time.Duration, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not exit within %s; output:\n%s", bin, strings.Join(args, " "), timeout, out)
	}
	if strings.Contains(string(out), raceReport) {
		t.Errorf("%s %s reported a data race (built with -race):\n%s", filepath.Base(bin), strings.Join(args, " "), out)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return 0, string(out)
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Eventually polls cond every 200 ms until it returns true, failing the test with what cond last
// said if timeout passes. Timeouts here are generous upper bounds, not performance assertions.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

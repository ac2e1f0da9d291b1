package framework

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// upSh is `bash hack/cluster/up.sh args…`.
func upSh(args ...string) *exec.Cmd {
	return exec.Command("bash", append([]string{filepath.Join(RepoRoot(), "hack", "cluster", "up.sh")}, args...)...)
}

// startSupervisor runs `hack/cluster/up.sh verb --foreground args…` (`cluster up`, `cluster
// metrics-server`), copies its output to stderr prefixed with what, hands each line to onLine
// (when set) and returns once it prints "<what> is ready". If this test process dies (panic,
// SIGKILL, timeout), the supervisor gets SIGTERM and stops what it started; its components die
// with it in turn. When it is not ready within timeout, it is returned with the error, still
// running: the caller stops it.
func startSupervisor(what string, timeout time.Duration, onLine func(string), verb string, args ...string) (*exec.Cmd, error) {
	cmd := upSh(append([]string{verb, "--foreground"}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start hack/cluster/up.sh %s: %w", verb, err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(os.Stderr, what+":", line)
			if onLine != nil {
				onLine(line)
			}
			if line == what+" is ready" && !signalled {
				signalled = true
				ready <- true
			}
		}
		if !signalled {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			return cmd, fmt.Errorf("hack/cluster/up.sh %s exited before %s was ready (its output is above)", verb, what)
		}
		return cmd, nil
	case <-time.After(timeout):
		return cmd, fmt.Errorf("%s was not ready after %s", what, timeout)
	}
}

// stopSupervisor sends the supervisor SIGTERM (it stops what it started, by PID) and waits for
// it; after a minute it kills the supervisor's process group.
func stopSupervisor(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

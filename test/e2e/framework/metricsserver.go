package framework

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartMetricsServer runs metrics-server for the local control plane (`hack/cluster/up.sh
// metrics-server --foreground`: built from the Go module proxy the first time, registered as the
// v1beta1.metrics.k8s.io APIService) with --metric-resolution resolution (at least 10 s), and
// returns once the API server reports the APIService Available. When the test ends it stops its
// supervisor by PID, which removes the APIService and stops metrics-server by its PID; if the
// test process dies, metrics-server dies with it (PR_SET_PDEATHSIG).
//
// metrics-server verifies each kubelet's serving certificate against the cluster CA: a node it
// should scrape runs with --rotate-server-certificates and its kubelet-serving CSR approved.
func (c *Cluster) StartMetricsServer(t *testing.T, resolution time.Duration) {
	t.Helper()
	if c.supervisor == nil {
		t.Fatal("metrics-server needs the local control plane (hack/cluster), not MINIKUBELET_E2E_KUBECONFIG")
	}
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "hack", "cluster", "up.sh"), "metrics-server", "--foreground",
		"--state-dir", c.stateDir, "--metric-resolution", resolution.String())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hack/cluster/up.sh metrics-server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(os.Stderr, "metrics-server:", line)
			if line == "metrics-server is ready" && !signalled {
				signalled = true
				ready <- nil
			}
		}
		if !signalled {
			ready <- errors.New("hack/cluster/up.sh metrics-server exited before metrics-server was ready (its output is above; its log: " +
				filepath.Join(c.stateDir, "logs", "metrics-server.log") + ")")
		}
	}()
	// The first run compiles metrics-server (a few minutes on 2 cores); later runs take seconds.
	select {
	case err = <-ready:
	case <-time.After(15 * time.Minute):
		err = errors.New("metrics-server was not ready after 15 minutes")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// MetricsServerLog returns what the local control plane's metrics-server logged so far.
func (c *Cluster) MetricsServerLog() string {
	data, _ := os.ReadFile(filepath.Join(c.stateDir, "logs", "metrics-server.log"))
	return strings.TrimSpace(string(data))
}

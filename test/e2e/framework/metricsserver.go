package framework

import (
	"os"
	"path/filepath"
	"strings"
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
// should scrape runs with --rotate-server-certificates and its kubelet-serving CSR approved
// (ApproveServingCSR).
func (c *Cluster) StartMetricsServer(t *testing.T, resolution time.Duration) {
	t.Helper()
	if c.supervisor == nil {
		t.Fatal("metrics-server needs the local control plane (hack/cluster), not MINIKUBELET_E2E_KUBECONFIG")
	}
	// The first run compiles metrics-server (a few minutes on 2 cores); later runs take seconds.
	cmd, err := startSupervisor("metrics-server", 15*time.Minute, nil, "metrics-server",
		"--state-dir", c.stateDir, "--metric-resolution", resolution.String())
	if cmd != nil {
		t.Cleanup(func() { stopSupervisor(cmd) })
	}
	if err != nil {
		t.Fatalf("%v; metrics-server's log: %s", err, c.metricsServerLogPath())
	}
}

// MetricsServerLog returns what the local control plane's metrics-server logged so far.
func (c *Cluster) MetricsServerLog() string {
	data, _ := os.ReadFile(c.metricsServerLogPath())
	return strings.TrimSpace(string(data))
}

func (c *Cluster) metricsServerLogPath() string {
	return filepath.Join(c.stateDir, "logs", "metrics-server.log")
}

package kubeadm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// staticContainers is "pod=containerID/restartCount …" for the control plane's mirror pods
// (their static pods' containers, as the kubelet reports them).
func staticContainers(t *testing.T, k func(...string) ([]byte, error)) map[string]string {
	t.Helper()
	b, err := k("-n", "kube-system", "get", "pods", "--field-selector", "spec.nodeName=minikubelet-cp", "-o",
		`jsonpath={range .items[?(@.metadata.annotations.kubernetes\.io/config\.mirror)]}{.metadata.name}={.status.containerStatuses[0].containerID}/{.status.containerStatuses[0].restartCount}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("mirror pods: %v\n%s", err, b)
	}
	m := map[string]string{}
	for _, l := range strings.Fields(string(b)) {
		name, v, _ := strings.Cut(l, "=")
		m[name] = v
	}
	if len(m) != 4 {
		t.Fatalf("want the 4 control-plane mirror pods on minikubelet-cp, got %v", m)
	}
	return m
}

// livezPoller GETs /livez through the host's forwarder every 50 ms and keeps the longest time
// between two good answers.
type livezPoller struct {
	mu            sync.Mutex
	last, longest time.Duration
	start         time.Time
	ok            int
}

func (p *livezPoller) run(ctx context.Context, t *testing.T, kc string) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Errorf("admin.kubeconfig: %v", err)
		return
	}
	cfg.Timeout = time.Second
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Errorf("client: %v", err)
		return
	}
	p.start = time.Now()
	for ctx.Err() == nil {
		resp, err := c.Get(cfg.Host + "/livez")
		if err == nil {
			good := resp.StatusCode == 200
			resp.Body.Close()
			if good {
				now := time.Since(p.start)
				p.mu.Lock()
				p.longest, p.last, p.ok = max(p.longest, now-p.last), now, p.ok+1
				p.mu.Unlock()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kubeletRestart (issue #32 item 5): `up.sh restart-kubelet` stops minikubelet on the control
// plane node (SIGTERM by PID) and starts it again with the same files and flags. The static pods'
// containers are adopted (same container IDs, restartCount unchanged) and the API server, in
// containerd, answers /livez through the host's forwarder all along: no gap between two good
// answers longer than the kubelet was down.
func kubeletRestart(t *testing.T, k func(...string) ([]byte, error), script, out string, env []string) {
	t.Helper()
	before := staticContainers(t, k)
	ctx, cancel := context.WithCancel(context.Background())
	p := &livezPoller{}
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx, t, filepath.Join(out, "admin.kubeconfig")) }()
	time.Sleep(time.Second)
	cmd := exec.Command("bash", script, "restart-kubelet", "1")
	cmd.Env, cmd.Dir = env, filepath.Dir(filepath.Dir(filepath.Dir(script)))
	b, err := cmd.CombinedOutput()
	t.Logf("restart-kubelet:\n%s", b)
	if err != nil {
		cancel()
		<-done
		t.Fatalf("restart-kubelet: %v", err)
	}
	downtime := restartDowntime(t, out)
	// The new kubelet syncs its pods (a restart would show here) and renews its Node's status.
	if b, err := k("wait", "--for=condition=Ready", "node/minikubelet-cp", "--timeout=60s"); err != nil {
		t.Errorf("node not Ready after the restart: %v\n%s", err, b)
	}
	time.Sleep(5 * time.Second)
	cancel()
	<-done
	t.Logf("kubelet down %v; /livez answered %d times, longest gap %v", downtime, p.ok, p.longest)
	if p.ok == 0 || p.longest > downtime {
		t.Errorf("the API server went away for %v (answers: %d) while the kubelet was down for %v", p.longest, p.ok, downtime)
	}
	after := staticContainers(t, k)
	t.Logf("static pods' containers/restartCount after the restart: %v", after)
	for pod, v := range before {
		if after[pod] != v {
			t.Errorf("%s: container/restartCount %s before the kubelet's restart, %s after: not adopted", pod, v, after[pod])
		}
	}
}

// restartDowntime: from the SIGTERM to the new kubelet's first good /healthz (kubelet-restarted).
func restartDowntime(t *testing.T, out string) time.Duration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "kubelet-restarted"))
	f := strings.Fields(string(b))
	if err != nil || len(f) != 2 {
		t.Fatalf("kubelet-restarted: %q (%v)", b, err)
	}
	t0, err0 := strconv.ParseInt(f[0], 10, 64)
	t1, err1 := strconv.ParseInt(f[1], 10, 64)
	if err0 != nil || err1 != nil || t1 < t0 {
		t.Fatalf("kubelet-restarted: %q", b)
	}
	return time.Duration(t1-t0) * time.Millisecond
}

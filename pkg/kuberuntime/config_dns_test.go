package kuberuntime

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func mustSandboxConfig(t *testing.T, m *Manager, pod *corev1.Pod) *runtimeapi.PodSandboxConfig {
	t.Helper()
	cfg, err := m.sandboxConfig(context.Background(), pod, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// fakeDNS answers every pod with one config, or fails.
type fakeDNS struct {
	cfg *runtimeapi.DNSConfig
	err error
}

func (f fakeDNS) PodDNS(context.Context, *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	return f.cfg, f.err
}

// The pod's DNS config goes into its PodSandboxConfig (upstream generatePodSandboxConfig calls
// GetPodDNS), and the runtime writes it as the containers' /etc/resolv.conf: on the fake runtime,
// `cat /etc/resolv.conf` in the container shows it, as containerd's file would.
func TestSandboxDNSConfigReachesResolvConf(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	m.dns = fakeDNS{cfg: &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10"},
		Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}}}
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	c := podStatus(t, ctx, m, pod).FindContainer("app")
	if c == nil {
		t.Fatal("the container was not created")
	}
	resp, err := m.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: c.ID, Cmd: []string{"cat", "/etc/resolv.conf"}, Timeout: 5})
	if err != nil {
		t.Fatal(err)
	}
	want := "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"
	if got := string(resp.GetStdout()); got != want {
		t.Errorf("/etc/resolv.conf:\n%s\nwant:\n%s", got, want)
	}
}

// A DNS config that cannot be made (the node's resolvConf unreadable) fails the sandbox, with
// upstream's FailedCreatePodSandBox Event and message; nothing is created.
func TestSandboxDNSFailureFailsSandbox(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	rec := record.NewFakeRecorder(8)
	m.recorder = rec
	m.dns = fakeDNS{err: errors.New("open resolvConf /nope: no such file or directory")}
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	res := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	if res.SandboxError == nil || !strings.Contains(res.SandboxError.Error(), `failed to generate sandbox config for pod "`) {
		t.Fatalf("SandboxError %v, want the sandbox config failure", res.SandboxError)
	}
	if got := <-rec.Events; !strings.HasPrefix(got, "Warning FailedCreatePodSandBox Failed to create pod sandbox: failed to generate sandbox config") || !strings.Contains(got, "/nope") {
		t.Errorf("event %q", got)
	}
	if st := podStatus(t, ctx, m, pod); len(st.Sandboxes) != 0 {
		t.Errorf("sandboxes %v, want none", st.Sandboxes)
	}
}

package fakeruntime

import (
	"os"
	"path/filepath"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A container's /etc/resolv.conf is the sandbox's DnsConfig in containerd's layout (search,
// nameserver per server, options); a sandbox without one gives no file, and a file mounted at
// /etc/resolv.conf keeps its own content.
func TestResolvConfFromSandboxDNSConfig(t *testing.T) {
	e := newTestEnv(t, nil)
	cat := func(id string) string {
		resp, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"cat", "/etc/resolv.conf"}, Timeout: 5})
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.GetStdout()) + string(resp.GetStderr())
	}
	cfg := sandboxConfig("dns")
	cfg.DnsConfig = &runtimeapi.DNSConfig{Servers: []string{"10.96.0.10", "10.96.0.11"}, Searches: []string{"a.svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5", "edns0"}}
	sb := e.runSandbox(t, cfg)
	id := e.createContainer(t, sb, containerConfig("app", "sleep", "infinity"))
	e.startContainer(t, id)
	if got, want := cat(id), "search a.svc.cluster.local cluster.local\nnameserver 10.96.0.10\nnameserver 10.96.0.11\noptions ndots:5 edns0\n"; got != want {
		t.Errorf("/etc/resolv.conf:\n%q\nwant\n%q", got, want)
	}

	own := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(own, []byte("nameserver 192.0.2.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mounted := containerConfig("mounted", "sleep", "infinity")
	mounted.Mounts = []*runtimeapi.Mount{{ContainerPath: "/etc/resolv.conf", HostPath: own, Readonly: true}}
	id = e.createContainer(t, sb, mounted)
	e.startContainer(t, id)
	if got := cat(id); got != "nameserver 192.0.2.1\n" {
		t.Errorf("mounted /etc/resolv.conf = %q, want the volume's own", got)
	}

	plain := e.runSandbox(t, sandboxConfig("plain"))
	id = e.createContainer(t, plain, containerConfig("app", "sleep", "infinity"))
	e.startContainer(t, id)
	if got := cat(id); got != "cat: can't open '/etc/resolv.conf': No such file or directory\n" {
		t.Errorf("no DnsConfig: cat /etc/resolv.conf = %q, want no file", got)
	}
}

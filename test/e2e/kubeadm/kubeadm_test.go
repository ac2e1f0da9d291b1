// Package kubeadm is the end-to-end test of `make kubeadm-up` (docs/kubeadm.md): kubeadm init
// v1.36.3 with minikubelet as the node's kubelet, in namespaces of its own, then `make
// kubeadm-down`, and the host as it was before. It runs with MINIKUBELET_E2E_KUBEADM=1, as root:
// CI sets it (.ci/run); a plain `make test` says "skipped" and why (the first build of kubeadm,
// kube-proxy and CoreDNS takes minutes).
//
//	sudo MINIKUBELET_E2E_KUBEADM=1 go test -count=1 -timeout 30m ./test/e2e/kubeadm/
package kubeadm

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// hostState is what kubeadm-up must not change on the host: its interfaces, its mounts, the
// fixed paths kubeadm writes to (their existence), /etc/hosts (the script adds the node's name to its private one).
type hostState struct {
	links, mounts string
	paths         map[string]bool
	hosts         [32]byte
}

func snapshot(t *testing.T) hostState {
	t.Helper()
	links, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := exec.Command("findmnt", "-rno", "TARGET").Output()
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	s := hostState{links: stripCounters(string(links)), mounts: string(mounts), paths: map[string]bool{}, hosts: sha256.Sum256(hosts)}
	kubepods, _ := filepath.Glob("/sys/fs/cgroup/*")
	for i, c := range kubepods {
		kubepods[i] = filepath.Join(c, "kubepods")
	}
	for _, p := range append([]string{"/etc/kubernetes", "/var/lib/kubelet", "/var/lib/etcd", "/etc/cni", "/run/xtables.lock"}, kubepods...) {
		_, err := os.Stat(p)
		s.paths[p] = err == nil
	}
	return s
}

// runPodUIDs: the UIDs of the pods of the run (its nodes' /var/lib/kubelet/pods, in their overlays).
func runPodUIDs(out string) []string {
	var uids []string
	for _, node := range []string{out, filepath.Join(out, "node2")} {
		ents, _ := os.ReadDir(filepath.Join(node, "overlay", "_var_lib", "upper", "kubelet", "pods"))
		for _, e := range ents {
			uids = append(uids, e.Name())
		}
	}
	return uids
}

// podCgroupsLeft: the host's cgroups (v1, every controller) of the given pods that still exist.
func podCgroupsLeft(uids []string) []string {
	var left []string
	for _, uid := range uids {
		for _, q := range []string{"", "burstable", "besteffort"} {
			m, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/*/kubepods", q, "pod"+uid))
			left = append(left, m...)
		}
	}
	return left
}

// tokenRE is a kubeadm bootstrap token (<id>.<secret>), or --token's value unless already
// redacted (up.sh prints "--token <redacted>"); redactTokens hides it.
var tokenRE = regexp.MustCompile(`\b[a-z0-9]{6}\.[a-z0-9]{16}\b|--token[ =][^<\s]\S*`)

func redactTokens(s string) string { return tokenRE.ReplaceAllString(s, "<redacted>") }

// tokensReadable: files under dir (not its bin/) that others may read and that hold a token.
func tokensReadable(dir string) []string {
	var found []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && p == filepath.Join(dir, "bin") {
			return fs.SkipDir
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o004 == 0 {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && tokenRE.Match(b) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// stripCounters keeps each interface's index and name: its flags and counters may change.
func stripCounters(links string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(links), "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			out = append(out, f[0]+f[1])
		}
	}
	return strings.Join(out, " ")
}

func TestKubeadmInitOnMinikubelet(t *testing.T) {
	if os.Getenv("MINIKUBELET_E2E_KUBEADM") != "1" {
		t.Skip("skipped: set MINIKUBELET_E2E_KUBEADM=1 (and run as root) to run kubeadm init on minikubelet; a cold build takes long (docs/kubeadm.md)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("MINIKUBELET_E2E_KUBEADM=1 needs root: namespaces, mounts, containerd")
	}
	repo := framework.RepoRoot()
	out := t.TempDir()
	before := snapshot(t)
	env := append(os.Environ(), "OUT="+out, "KUBEADM_API_PORT=16543", "KUBEADM_NODES=2")
	script := filepath.Join(repo, "hack", "kubeadm", "up.sh")
	t.Cleanup(func() {
		uids := runPodUIDs(out)
		down := exec.Command("bash", script, "down")
		down.Env, down.Dir = env, repo
		if b, err := down.CombinedOutput(); err != nil {
			t.Errorf("kubeadm down: %v\n%s", err, b)
		}
		after := snapshot(t)
		if after.links != before.links || after.hosts != before.hosts {
			t.Errorf("the host changed: links %q → %q; /etc/hosts changed: %v", before.links, after.links, after.hosts != before.hosts)
		}
		// Only the run's mounts: other work on the machine may mount and unmount meanwhile.
		for _, m := range strings.Split(after.mounts, "\n") {
			if strings.HasPrefix(m, out) || strings.Contains(m, "kubernetes") || strings.HasPrefix(m, "/var/lib/kubelet") {
				t.Errorf("a mount of the run is left on the host: %s", m)
			}
		}
		for p, had := range before.paths {
			if after.paths[p] != had {
				t.Errorf("%s: existed before %v, after %v", p, had, after.paths[p])
			}
		}
		if b, _ := exec.Command("pgrep", "-f", out).Output(); len(b) > 0 {
			t.Errorf("processes of the run are left: %s", b)
		}
		if left := podCgroupsLeft(uids); len(left) > 0 || len(uids) == 0 && !t.Failed() {
			t.Errorf("pod cgroups of the run's %d pods left on the host: %q", len(uids), left)
		} else {
			t.Logf("after down: no cgroup of the run's %d pods is left on the host", len(uids))
		}
		if _, err := os.Stat(filepath.Join(out, "join-command.txt")); err == nil {
			t.Errorf("join-command.txt (the bootstrap token) is left after down")
		}
		if f := tokensReadable(out); len(f) > 0 {
			t.Errorf("files readable by others hold a bootstrap token: %q", f)
		}
	})
	up := exec.Command("bash", script, "up")
	up.Env, up.Dir = env, repo
	b, err := up.CombinedOutput()
	logTail(t, filepath.Join(out, "logs", "kubeadm-init.log"))
	for _, l := range strings.Split(string(b), "\n") {
		if tokenRE.MatchString(l) {
			t.Errorf("kubeadm up printed a bootstrap token: %s", redactTokens(l))
		}
	}
	if err != nil {
		t.Fatalf("kubeadm up: %v\n%s", err, redactTokens(string(b)))
	}
	kubectl := filepath.Join(out, "bin", "kubectl")
	kc := filepath.Join(out, "admin.kubeconfig")
	// Both: the control plane (kubeadm init) and the node that joined (kubeadm join, TLS bootstrap).
	nodes, err := exec.Command(kubectl, "--kubeconfig", kc, "wait", "--for=condition=Ready", "node/minikubelet-cp", "node/minikubelet-w1", "--timeout=120s").CombinedOutput()
	if err != nil {
		t.Fatalf("nodes minikubelet-cp and minikubelet-w1 not Ready through the host's forwarder: %v\n%s", err, nodes)
	}
	k := func(args ...string) ([]byte, error) {
		return exec.Command(kubectl, append([]string{"--kubeconfig", kc}, args...)...).CombinedOutput()
	}
	for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		pod := "pod/" + c + "-minikubelet-cp"
		// A mirror pod refused at the start (its PriorityClass not made yet) is created again at
		// a later sync of its static pod: wait for it to exist, then to be Ready.
		if b, err := k("-n", "kube-system", "wait", "--for=create", pod, "--timeout=120s"); err != nil {
			t.Errorf("mirror pod %s not created: %v\n%s", pod, err, b)
		} else if b, err := k("-n", "kube-system", "wait", "--for=condition=Ready", pod, "--timeout=120s"); err != nil {
			t.Errorf("mirror pod %s not Ready: %v\n%s", pod, err, b)
		}
	}
	// The addons kubeadm applied, run by minikubelet: kube-proxy (DaemonSet) and CoreDNS.
	for _, sel := range []string{"k8s-app=kube-proxy", "k8s-app=kube-dns"} {
		if b, err := k("-n", "kube-system", "wait", "--for=condition=Ready", "pod", "-l", sel, "--timeout=180s"); err != nil {
			t.Errorf("pods %s not Ready: %v\n%s", sel, err, b)
		}
	}
	// kube-proxy runs on both nodes (a DaemonSet).
	if b, err := k("-n", "kube-system", "get", "ds", "kube-proxy", "-o", "jsonpath={.status.numberReady}"); err != nil || string(b) != "2" {
		t.Errorf("kube-proxy pods Ready: %q (%v); want 2", b, err)
	}
	// mark-control-plane ran: the role label and the taint.
	if b, err := k("get", "node", "minikubelet-cp", "-o", "jsonpath={.metadata.labels.node-role\\.kubernetes\\.io/control-plane}|{.spec.taints[*].key}"); err != nil || !strings.Contains(string(b), "|node-role.kubernetes.io/control-plane") {
		t.Errorf("mark-control-plane: label|taints %q (%v)", b, err)
	}
	noRestarts(t, k)
	serviceAndDNS(t, k)
	nodeToService(t, k, out)
	kubeletRestart(t, k, script, out, env)
	lab11(t, k, repo, out)
	noRestarts(t, k)
	jc := filepath.Join(out, "join-command.txt")
	join, err := os.ReadFile(jc)
	if err != nil || !strings.HasPrefix(string(join), "kubeadm join ") {
		t.Errorf("kubeadm token create --print-join-command: %q (%v)", redactTokens(string(join)), err)
	}
	for _, f := range []string{jc, filepath.Join(out, "node2", "kubeadm-join.yaml"), filepath.Join(out, "logs", "kubeadm-init.log")} {
		if info, err := os.Stat(f); err != nil {
			t.Error(err)
		} else if info.Mode().Perm() != 0o600 {
			t.Errorf("%s holds the bootstrap token: want mode 0600, got %v", f, info.Mode().Perm())
		}
	}
}

// noRestarts: no container of kube-system was restarted (a failing probe restarts it).
func noRestarts(t *testing.T, k func(...string) ([]byte, error)) {
	t.Helper()
	b, err := k("-n", "kube-system", "get", "pods", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.containerStatuses[*].restartCount}{"\n"}{end}`)
	if err != nil {
		t.Fatalf("kube-system pods: %v\n%s", err, b)
	}
	for _, l := range strings.Fields(string(b)) {
		if !strings.HasSuffix(l, "=0") {
			t.Errorf("a kube-system container was restarted: %s", l)
		}
	}
}

// serviceManifest: a backend pod on the node that joined, a ClusterIP Service for it and a client
// pod on the control-plane node (nodeName: not scheduled, so the control-plane taint does not
// keep it away), so that the Service's traffic crosses from one node to the other.
const serviceManifest = `
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: minikubelet-w1
  containers:
  - name: web
    image: docker.io/minikubelet/busybox:local
    imagePullPolicy: Never
    command: [sh, -c, 'mkdir -p /www && echo hello-from-web > /www/index.html && exec httpd -f -p 8080 -h /www']
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: minikubelet-cp
  containers:
  - name: client
    image: docker.io/minikubelet/busybox:local
    imagePullPolicy: Never
    command: [sleep, "3600"]
`

// serviceAndDNS: from a pod, kubernetes.default.svc.cluster.local resolves through CoreDNS (the
// pod's resolv.conf from clusterDNS) and the Service's name reaches its backend on the other node
// (kube-proxy's iptables rules, the route between the nodes' pod networks).
func serviceAndDNS(t *testing.T, k func(...string) ([]byte, error)) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "svc.yaml")
	if err := os.WriteFile(f, []byte(serviceManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := k("apply", "-f", f); err != nil {
		t.Fatalf("apply: %v\n%s", err, b)
	}
	if b, err := k("wait", "--for=condition=Ready", "pod/web", "pod/client", "--timeout=120s"); err != nil {
		d, _ := k("describe", "pod", "web", "client")
		t.Fatalf("web and client pods: %v\n%s\n%s", err, b, d)
	}
	b, err := k("exec", "client", "--", "nslookup", "kubernetes.default.svc.cluster.local")
	if err != nil || !strings.Contains(string(b), "10.96.0.1") {
		t.Errorf("nslookup kubernetes.default.svc.cluster.local from a pod: %v\n%s", err, b)
	}
	// nc, not busybox's wget: the latter crashes (SIGSEGV) in this busybox build.
	b, err = k("exec", "client", "--", "sh", "-c", `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 web.default.svc.cluster.local 80`)
	if err != nil || !strings.Contains(string(b), "200 OK") || !strings.HasSuffix(strings.TrimSpace(string(b)), "hello-from-web") {
		t.Errorf("the Service web from a pod: %v\n%s", err, b)
	}
}

// nodeToService: the node itself — not a pod — reaches a ClusterIP, as kube-apiserver must for a
// webhook Service: from the control-plane node's network namespace (nsenter by the PID up.sh
// records), the Service web's ClusterIP answers with its backend's page on the other node (up.sh's
// route for the Service subnet, then kube-proxy's OUTPUT DNAT).
func nodeToService(t *testing.T, k func(...string) ([]byte, error), out string) {
	t.Helper()
	ip, err := k("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		t.Fatalf("service web: %v\n%s", err, ip)
	}
	pid, err := os.ReadFile(filepath.Join(out, "inner.pid"))
	if err != nil {
		t.Fatal(err)
	}
	get := fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | busybox nc -w 5 %s 80`, ip)
	b, err := exec.Command("nsenter", "-t", strings.TrimSpace(string(pid)), "-n", "--", "sh", "-c", get).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(b)), "hello-from-web") {
		t.Errorf("the Service web (%s) from the control-plane node's network namespace: %v\n%s", ip, err, b)
	}
}

// logTail shows the end of a log of the run in the test's output.
func logTail(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(l, "envvar.go") { // kubeadm's feature-gate lines at -v 1
			lines = append(lines, l)
		}
	}
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	t.Logf("%s (end):\n%s", path, redactTokens(strings.Join(lines, "\n")))
}

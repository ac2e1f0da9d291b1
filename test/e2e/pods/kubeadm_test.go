package pods

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// What `kubeadm init` needs of a node's kubelet, on one node: /healthz on healthzPort (kubeadm's
// wait-control-plane GETs it), a static pod as kubeadm writes them — priorityClassName
// system-node-critical, hostPath volumes of type DirectoryOrCreate and FileOrCreate, probes on the
// named port probe-port — whose mirror pod the API server's Priority admission accepts (kubeadm
// writes priority 2000001000 beside the class; the two must agree), and
// the /etc/resolv.conf a dnsPolicy gives a pod (clusterDNS, clusterDomain).
func TestKubeadmNodeNeeds(t *testing.T) {
	manifests, hostDir := t.TempDir(), t.TempDir()
	n := startNode(t, "e2e-pods-kubeadm", "--pod-manifest-path", manifests) // clusterDNS 10.96.0.10, cluster.local (startNodeWith)
	t.Run("healthz", func(t *testing.T) { checkHealthz(t, n.healthz) })
	t.Run("static pod like kubeadm's", func(t *testing.T) { checkKubeadmStaticPod(t, n, manifests, hostDir) })
	t.Run("resolv.conf", func(t *testing.T) { checkResolvConf(t, n) })
}

// checkHealthz: plain HTTP on 127.0.0.1, no credentials, 200 "ok".
func checkHealthz(t *testing.T, port int) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET /healthz = %d %q, want 200 \"ok\"", resp.StatusCode, body)
	}
}

func checkKubeadmStaticPod(t *testing.T, n *node, manifests, hostDir string) {
	ctx := context.Background()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: kube-fake
  namespace: kube-system
  labels: {component: kube-fake, tier: control-plane}
spec:
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: kube-fake
    image: busybox:1.36
    command: ["serve", "http", "8080", "/livez=200", "/readyz=200"]
    ports:
    - {name: probe-port, containerPort: 8080, protocol: TCP}
    livenessProbe:
      httpGet: {path: /livez, port: probe-port}
      periodSeconds: 1
    readinessProbe:
      httpGet: {path: /readyz, port: probe-port}
      periodSeconds: 1
    startupProbe:
      tcpSocket: {port: probe-port}
      periodSeconds: 1
    volumeMounts:
    - {name: data, mountPath: /var/lib/fake}
    - {name: conf, mountPath: /etc/fake.conf, readOnly: true}
  volumes:
  - name: data
    hostPath: {path: %[1]s/data, type: DirectoryOrCreate}
  - name: conf
    hostPath: {path: %[1]s/fake.conf, type: FileOrCreate}
`, hostDir)
	if err := os.WriteFile(filepath.Join(manifests, "kube-fake.yaml"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	mirrorName := "kube-fake-" + n.name
	var mirror *corev1.Pod
	framework.Eventually(t, 2*time.Minute, "the mirror pod, Running and Ready", func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods("kube-system").Get(ctx, mirrorName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		mirror = p
		return p.Status.Phase == corev1.PodRunning && isReady(p), describe(p)
	})
	t.Cleanup(func() { _ = os.Remove(filepath.Join(manifests, "kube-fake.yaml")) })
	// The API server's Priority admission resolved the class for the mirror pod.
	if mirror.Spec.Priority == nil || *mirror.Spec.Priority != 2000001000 || mirror.Spec.PriorityClassName != "system-node-critical" {
		t.Errorf("mirror pod priority %v class %q, want 2000001000 from system-node-critical", mirror.Spec.Priority, mirror.Spec.PriorityClassName)
	}
	if fi, err := os.Stat(filepath.Join(hostDir, "data")); err != nil || !fi.IsDir() {
		t.Errorf("hostPath DirectoryOrCreate: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(hostDir, "fake.conf")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("hostPath FileOrCreate: %v", err)
	}
}

// checkResolvConf: ClusterFirst gives clusterDNS and the cluster's search domains before the
// node's, ndots:5; None gives only the pod's dnsConfig — as `kubectl exec cat /etc/resolv.conf`
// shows them.
func checkResolvConf(t *testing.T, n *node) {
	ns := namespace(t)
	runningPod(t, ns, "cluster-first", podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"))
	out, code := kubectl(t, "", "-n", ns, "exec", "cluster-first", "--", "cat", "/etc/resolv.conf")
	wantSearch := fmt.Sprintf("search %s.svc.cluster.local svc.cluster.local cluster.local", ns)
	if code != 0 || !strings.HasPrefix(out, wantSearch) || !strings.Contains(out, "\nnameserver 10.96.0.10\n") ||
		strings.Count(out, "nameserver") != 1 || !strings.HasSuffix(out, "options ndots:5\n") {
		t.Errorf("ClusterFirst /etc/resolv.conf (exit %d):\n%s\nwant %q…, only nameserver 10.96.0.10, options ndots:5", code, out, wantSearch)
	}
	none := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	none.DNSPolicy = corev1.DNSNone
	none.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1"}, Searches: []string{"example.test"},
		Options: []corev1.PodDNSConfigOption{{Name: "edns0"}}}
	runningPod(t, ns, "dns-none", none)
	out, code = kubectl(t, "", "-n", ns, "exec", "dns-none", "--", "cat", "/etc/resolv.conf")
	if want := "search example.test\nnameserver 192.0.2.1\noptions edns0\n"; code != 0 || out != want {
		t.Errorf("dnsPolicy None /etc/resolv.conf (exit %d):\n%s\nwant:\n%s", code, out, want)
	}
}

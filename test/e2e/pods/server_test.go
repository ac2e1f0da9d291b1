package pods

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// kubectl runs the cluster's kubectl as the admin with stdin, and returns its output and exit code.
func kubectl(t *testing.T, stdin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cluster.Kubectl, append([]string{"--kubeconfig", cluster.AdminKubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if exitErr, ok := err.(*exec.ExitError); ok {
		return string(out), exitErr.ExitCode()
	}
	if err != nil {
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return string(out), 0
}

// runningPod creates a pod and waits until its container runs.
func runningPod(t *testing.T, ns, name string, spec corev1.PodSpec) *corev1.Pod {
	t.Helper()
	createPod(t, ns, name, spec)
	var pod *corev1.Pod
	framework.Eventually(t, time.Minute, name+" Running", func() (bool, string) {
		pod = getPod(t, ns, name)
		return pod.Status.Phase == corev1.PodRunning && isReady(pod), describe(pod)
	})
	return pod
}

// kubectl exec, logs, port-forward and the node proxy work through the real API server against
// minikubelet's :10250 (upstream: pkg/kubelet/server), with unmodified kubectl.
func TestKubectlExecLogsPortForward(t *testing.T) {
	n := startNode(t, "e2e-pods-server")
	ns := namespace(t)

	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo first line; echo second line; sleep infinity")
	spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}}
	runningPod(t, ns, "shell", spec)

	// exec: output, stdin, exit codes, a tty.
	if out, code := kubectl(t, "", "-n", ns, "exec", "shell", "--", "echo", "hi"); code != 0 || out != "hi\n" {
		t.Errorf("kubectl exec -- echo hi: exit %d, %q", code, out)
	}
	if out, code := kubectl(t, "from stdin\n", "-n", ns, "exec", "-i", "shell", "--", "cat"); code != 0 || out != "from stdin\n" {
		t.Errorf("kubectl exec -i -- cat: exit %d, %q", code, out)
	}
	if out, code := kubectl(t, "", "-n", ns, "exec", "shell", "--", "sh", "-c", "exit 3"); code != 3 {
		t.Errorf("kubectl exec -- sh -c 'exit 3': exit %d, want 3; %q", code, out)
	}
	// kubectl on a real pseudo-terminal (tty_test.go), as a user at a terminal runs it.
	tty := kubectlOnTTY(t, "-n", ns, "exec", "-it", "shell", "--", "echo", "from-a-tty")
	tty.waitFor(0, "from-a-tty\r\n")
	if code := tty.exitCode(); code != 0 {
		t.Errorf("kubectl exec -it -- echo from-a-tty: exit %d; the terminal shows %q", code, tty.String())
	}
	// The fake runtime never runs host programs, whatever exec asks.
	marker := filepath.Join(t.TempDir(), "pwned")
	kubectl(t, "", "-n", ns, "exec", "shell", "--", "/bin/touch", marker)
	kubectl(t, "", "-n", ns, "exec", "shell", "--", "sh", "-c", "touch "+marker)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("exec ran a host program: %s exists", marker)
	}

	// logs: all, tail, timestamps, follow.
	if out, code := kubectl(t, "", "-n", ns, "logs", "shell"); code != 0 || out != "first line\nsecond line\n" {
		t.Errorf("kubectl logs: exit %d, %q", code, out)
	}
	if out, _ := kubectl(t, "", "-n", ns, "logs", "shell", "--tail=1"); out != "second line\n" {
		t.Errorf("kubectl logs --tail=1: %q", out)
	}
	if out, _ := kubectl(t, "", "-n", ns, "logs", "shell", "--timestamps"); !strings.Contains(out, "Z first line\n") {
		t.Errorf("kubectl logs --timestamps: %q", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	follow := exec.CommandContext(ctx, cluster.Kubectl, "--kubeconfig", cluster.AdminKubeconfig, "-n", ns, "logs", "-f", "shell")
	followOut, _ := follow.Output() // ends when the context does: -f keeps streaming
	cancel()
	if !strings.Contains(string(followOut), "second line") {
		t.Errorf("kubectl logs -f: %q", followOut)
	}

	// logs --previous after a restart.
	runningPod(t, ns, "restarts", podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo run once; sleep infinity"))
	id := strings.TrimPrefix(getPod(t, ns, "restarts").Status.ContainerStatuses[0].ContainerID, "minikubelet-fake://")
	if code, out := framework.RunToExit(t, time.Minute, minikubelet, "fake-runtime", "kill-container", id, "--exit-code", "1", "--socket", n.socket); code != 0 {
		t.Fatal(out)
	}
	framework.Eventually(t, time.Minute, "a restart", func() (bool, string) {
		p := getPod(t, ns, "restarts")
		return p.Status.ContainerStatuses[0].RestartCount == 1 && p.Status.ContainerStatuses[0].State.Running != nil, describe(p)
	})
	if out, code := kubectl(t, "", "-n", ns, "logs", "restarts", "--previous"); code != 0 || out != "run once\n" {
		t.Errorf("kubectl logs --previous: exit %d, %q", code, out)
	}

	// port-forward: bytes go to the pod's port and come back (the fake runtime echoes).
	local := framework.FreePort(t)
	pf := framework.StartProcess(t, cluster.Kubectl, "--kubeconfig", cluster.AdminKubeconfig, "-n", ns, "port-forward", "pod/shell", fmt.Sprintf("%d:80", local))
	var echoed string
	framework.Eventually(t, time.Minute, "bytes through kubectl port-forward", func() (bool, string) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", local), time.Second)
		if err != nil {
			return false, err.Error() + "\n" + pf.Log()
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte("ping\n")); err != nil {
			return false, err.Error()
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(conn, buf); err != nil {
			return false, err.Error()
		}
		echoed = string(buf)
		return true, ""
	})
	if echoed != "ping\n" {
		t.Errorf("port-forward echoed %q", echoed)
	}

	// (kubectl get --raw /api/v1/nodes/<node>/proxy/… is refused by the API server itself for a
	// node whose address is loopback — "address not allowed" — so it is tested in test/e2e/proxy,
	// where the node has a non-loopback address in a private network namespace.)
}

// :10250 requires authentication and authorization: no credentials → 401; a user the cluster
// knows but RBAC does not allow → 403; the cluster admin → 200.
func TestKubeletAPIAuth(t *testing.T) {
	n := startNode(t, "e2e-pods-auth")
	// The kubelet's serving certificate is self-signed (as upstream's default): trust exactly it.
	api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := api.Get(t, "/pods"); code != http.StatusUnauthorized {
		t.Errorf("no credentials: %d %s, want 401", code, body)
	}
	if code, body := api.Get(t, "/pods", clientCertFor(t, "bob")); code != http.StatusForbidden || !strings.Contains(body, "user=bob") {
		t.Errorf("user bob without RBAC: %d %s, want 403", code, body)
	}
	admin := adminCert(t)
	if code, body := api.Get(t, "/pods", admin); code != http.StatusOK || !strings.Contains(body, `"kind":"PodList"`) {
		t.Errorf("cluster admin: %d %.200s, want 200 and a PodList", code, body)
	}
	framework.Eventually(t, time.Minute, "kubelet metrics", func() (bool, string) {
		code, body := api.Get(t, "/metrics", admin)
		return code == http.StatusOK && strings.Contains(body, "kubelet_pleg_relist_duration_seconds_count") &&
			strings.Contains(body, "kubelet_running_pods") && strings.Contains(body, "kubelet_lease_renew_duration_seconds"), fmt.Sprintf("%d %.300s", code, body)
	})
}

// clientCertFor gets a client certificate for user from the cluster's kube-apiserver-client
// signer through a CSR the admin approves — a real identity the API server knows.
func clientCertFor(t *testing.T, user string) tls.Certificate {
	t.Helper()
	ctx := context.Background()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: user}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := cluster.Client.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + user + "-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
	})
	if err := cluster.ApproveCSR(csr); err != nil {
		t.Fatal(err)
	}
	var certPEM []byte
	framework.Eventually(t, time.Minute, "the signed certificate", func() (bool, string) {
		got, err := cluster.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		certPEM = got.Status.Certificate
		return len(certPEM) > 0, "not issued yet"
	})
	keyDER, _ := x509.MarshalECPrivateKey(key)
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

package node

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// errorLine returns the single "minikubelet: …" line a failed run prints, failing the test if
// there is not exactly one.
func errorLine(t *testing.T, out string) string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "minikubelet: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want exactly one 'minikubelet: …' error line, got %d in:\n%s", len(lines), out)
	}
	return lines[0]
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// bootstrapKubeconfigWith rewrites the cluster's bootstrap kubeconfig with edit applied.
func bootstrapKubeconfigWith(t *testing.T, edit func(cfg *clientcmdConfig)) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(cluster.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	edit(&clientcmdConfig{raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster], raw.AuthInfos[raw.Contexts[raw.CurrentContext].AuthInfo]})
	path := filepath.Join(t.TempDir(), "bootstrap.kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return path
}

type clientcmdConfig struct {
	cluster *clientcmdapi.Cluster
	user    *clientcmdapi.AuthInfo
}

// Bad input gets one clear line that says what is wrong and what to do, and exit status 1.
func TestBadInputsExitWithAClearMessage(t *testing.T) {
	t.Cleanup(func() { deleteNodeArtifacts(t, "e2e-bad-input") })
	badConfig := writeFile(t, "config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: -3\n")
	typoConfig := writeFile(t, "typo.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nnodeStatusUpdateFrequncy: 10s\n")
	wrongKind := writeFile(t, "kind.yaml", "apiVersion: v1\nkind: ConfigMap\n")
	garbled := writeFile(t, "garbled.kubeconfig", "apiVersion: v1\nclusters: [ {{{ not yaml\n")
	noCA := bootstrapKubeconfigWith(t, func(c *clientcmdConfig) { c.cluster.CertificateAuthorityData = nil })
	insecure := bootstrapKubeconfigWith(t, func(c *clientcmdConfig) {
		c.cluster.CertificateAuthorityData = nil
		c.cluster.InsecureSkipTLSVerify = true
	})
	wrongToken := bootstrapKubeconfigWith(t, func(c *clientcmdConfig) { c.user.Token = "abcdef.0123456789abcdef" })

	tests := []struct {
		name string
		args []string
		want []string // substrings of the error line
	}{
		{"unknown flag", []string{"--no-such-flag"}, []string{"unknown flag: --no-such-flag"}},
		{"invalid config value", []string{"--config", badConfig}, []string{"maxPods (--max-pods) must be at least 1"}},
		{"misspelt config field", []string{"--config", typoConfig}, []string{"nodeStatusUpdateFrequncy", "field names"}},
		{"config of the wrong kind", []string{"--config", wrongKind}, []string{"want apiVersion kubelet.config.k8s.io/v1beta1 and kind KubeletConfiguration"}},
		{"missing config file", []string{"--config", "/nonexistent/config.yaml"}, []string{"cannot read /nonexistent/config.yaml"}},
		{"bad flag value", []string{"--register-with-taints", "dedicated=true"}, []string{"missing effect", "NoSchedule"}},
		{"restricted node label", []string{"--node-labels", "node-role.kubernetes.io/worker="}, []string{"NodeRestriction"}},
		{"missing bootstrap kubeconfig", []string{"--bootstrap-kubeconfig", "/nonexistent/bootstrap.kubeconfig"}, []string{"cannot be read", "bootstrap token"}},
		{"garbled bootstrap kubeconfig", []string{"--bootstrap-kubeconfig", garbled}, []string{"--bootstrap-kubeconfig " + garbled}},
		{"bootstrap kubeconfig without CA", []string{"--bootstrap-kubeconfig", noCA}, []string{"has no certificate-authority"}},
		{"insecure bootstrap kubeconfig", []string{"--bootstrap-kubeconfig", insecure}, []string{"never skips TLS verification"}},
		{"wrong token", []string{"--bootstrap-kubeconfig", wrongToken}, []string{"401 Unauthorized", "wrong or expired"}},
		{"unreachable runtime", []string{"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--container-runtime-endpoint", "unix:///nonexistent/containerd.sock"},
			[]string{"cannot reach the container runtime at unix:///nonexistent/containerd.sock", "is it running?"}},
		{"cert dir not writable", []string{"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--cert-dir", "/proc/minikubelet-pki"}, []string{"--cert-dir /proc/minikubelet-pki"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--root-dir", t.TempDir(), "--hostname-override", "e2e-bad-input", "--node-ip", "127.0.0.1",
				"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t))}, tc.args...)
			code, out := framework.RunToExit(t, 2*time.Minute, minikubelet, args...)
			if code != 1 {
				t.Fatalf("exit code %d, want 1; output:\n%s", code, out)
			}
			line := errorLine(t, out)
			for _, want := range tc.want {
				if !strings.Contains(line, want) {
					t.Errorf("error line %q does not say %q", line, want)
				}
			}
		})
	}
}

// manualBootstrapKubeconfig creates a bootstrap token whose CSRs are NOT auto-approved (its group
// may create CSRs but has no auto-approve binding), so a test can deny or let time run out.
func manualBootstrapKubeconfig(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	const group = "system:bootstrappers:e2e-manual"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-e2eman", Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": "e2eman", "token-secret": "0123456789abcdef",
			"usage-bootstrap-authentication": "true", "auth-extra-groups": group,
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-manual-bootstrap"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}
	if _, err := cluster.Client.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(secret.Namespace).Delete(ctx, secret.Name, metav1.DeleteOptions{})
		_ = cluster.Client.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
	})
	return bootstrapKubeconfigWith(t, func(c *clientcmdConfig) { c.user.Token = "e2eman.0123456789abcdef" })
}

// A CSR nobody approves: minikubelet gives up after --bootstrap-timeout and prints the command
// that approves it; a denied CSR is reported as denied.
func TestBootstrapCSRNotApprovedOrDenied(t *testing.T) {
	boot := manualBootstrapKubeconfig(t)

	t.Run("not approved in time", func(t *testing.T) {
		const name = "e2e-unapproved"
		t.Cleanup(func() { deleteNodeArtifacts(t, name) })
		code, out := framework.RunToExit(t, 2*time.Minute, minikubelet, "--root-dir", t.TempDir(), "--hostname-override", name,
			"--node-ip", "127.0.0.1", "--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)), "--bootstrap-kubeconfig", boot, "--bootstrap-timeout", "3s")
		if code != 1 {
			t.Fatalf("exit code %d, want 1:\n%s", code, out)
		}
		line := errorLine(t, out)
		csrs := csrsFor(t, name)
		if len(csrs) != 1 {
			t.Fatalf("want one CSR for %s, got %d", name, len(csrs))
		}
		for _, want := range []string{"was not approved within 3s", "kubectl certificate approve " + csrs[0].Name} {
			if !strings.Contains(line, want) {
				t.Errorf("error line %q does not say %q", line, want)
			}
		}
	})

	t.Run("denied", func(t *testing.T) {
		const name = "e2e-denied"
		t.Cleanup(func() { deleteNodeArtifacts(t, name) })
		kubelet := framework.StartProcess(t, minikubelet, "--root-dir", t.TempDir(), "--hostname-override", name,
			"--node-ip", "127.0.0.1", "--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)), "--bootstrap-kubeconfig", boot)
		var csr certificatesv1.CertificateSigningRequest
		framework.Eventually(t, time.Minute, "the kubelet's CSR", func() (bool, string) {
			csrs := csrsFor(t, name)
			if len(csrs) == 1 {
				csr = csrs[0]
			}
			return len(csrs) == 1, "no CSR yet"
		})
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "E2EDenied", Message: "denied by the e2e test",
		})
		if _, err := cluster.Client.CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), csr.Name, &csr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		code, err := kubelet.Wait(time.Minute)
		if err != nil || code != 1 {
			t.Fatalf("after the denial: exit %d, err %v; want 1", code, err)
		}
		line := errorLine(t, kubelet.Log())
		for _, want := range []string{csr.Name, "DENIED", "E2EDenied"} {
			if !strings.Contains(line, want) {
				t.Errorf("error line %q does not say %q", line, want)
			}
		}
	})
}

// deleteNodeArtifacts removes what a test node leaves in the cluster, so tests can run again on a
// reused cluster.
func deleteNodeArtifacts(t *testing.T, name string) {
	ctx := context.Background()
	for _, csr := range csrsFor(t, name) {
		_ = cluster.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
	}
	_ = cluster.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	_ = cluster.Client.CoordinationV1().Leases("kube-node-lease").Delete(ctx, name, metav1.DeleteOptions{})
}

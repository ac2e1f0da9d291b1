package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// The control plane is the real v1.36.3 with the four namespaces of a fresh cluster.
func TestControlPlaneVersionAndNamespaces(t *testing.T) {
	out, err := cluster.KubectlOutput("get", "--raw", "/version")
	if err != nil || !strings.Contains(out, `"gitVersion": "v1.36.3"`) {
		t.Errorf("/version = %s (err %v), want gitVersion v1.36.3", out, err)
	}
	out, err = cluster.KubectlOutput("get", "ns", "-o", "name")
	if err != nil {
		t.Fatal(err, out)
	}
	for _, ns := range []string{"default", "kube-node-lease", "kube-public", "kube-system"} {
		if !strings.Contains(out, "namespace/"+ns+"\n") {
			t.Errorf("namespace %s missing from:\n%s", ns, out)
		}
	}
}

// kubeadm's bootstrap flow: the token in bootstrap.kubeconfig may create a node client CSR, and
// kube-controller-manager approves and signs it without a human.
func TestBootstrapTokenCSRIsAutoApproved(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Insecure || len(cfg.CAData) == 0 || cfg.BearerToken == "" {
		t.Fatalf("bootstrap kubeconfig must embed the CA and a token and never skip TLS verify: insecure=%v ca=%d bytes token=%q", cfg.Insecure, len(cfg.CAData), cfg.BearerToken)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:e2e-csr-probe", Organization: []string{"system:nodes"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	csr, err := client.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-probe-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the bootstrap token cannot create a CSR: %v", err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
	})
	framework.Eventually(t, time.Minute, "the CSR to be Approved,Issued", func() (bool, string) {
		got, err := cluster.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		approved := false
		for _, c := range got.Status.Conditions {
			approved = approved || c.Type == certificatesv1.CertificateApproved
		}
		return approved && len(got.Status.Certificate) > 0, "conditions " + conditionsString(got)
	})
	out, err := cluster.KubectlOutput("get", "csr", csr.Name)
	if err != nil || !strings.Contains(out, "Approved,Issued") {
		t.Errorf("kubectl get csr = %s (err %v), want Approved,Issued", out, err)
	}
}

func conditionsString(csr *certificatesv1.CertificateSigningRequest) string {
	var parts []string
	for _, c := range csr.Status.Conditions {
		parts = append(parts, string(c.Type))
	}
	return strings.Join(parts, ",")
}

// `minikubelet version` names the Kubernetes release it is built against (read from the binary's
// module information, which only a real build carries); --help works.
func TestVersionAndHelp(t *testing.T) {
	code, out := framework.RunToExit(t, time.Minute, minikubelet, "version")
	if code != 0 || !strings.Contains(out, "Kubernetes v1.36.3 (k8s.io modules v0.36.3)") || !strings.HasPrefix(out, "minikubelet ") {
		t.Errorf("minikubelet version: exit %d\n%s", code, out)
	}
	code, out = framework.RunToExit(t, time.Minute, minikubelet, "--help")
	if code != 0 || !strings.Contains(out, "--bootstrap-kubeconfig") || !strings.Contains(out, "fake-runtime") {
		t.Errorf("minikubelet --help: exit %d\n%s", code, out)
	}
}

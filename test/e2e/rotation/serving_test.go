package rotation

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// serverTLSBootstrap (--rotate-server-certificates): the kubelet API's certificate comes from a
// kubernetes.io/kubelet-serving CSR that nothing approves automatically; until an admin approves
// it, TLS handshakes fail; once approved, the API serves a certificate the cluster CA verifies for
// the node's IP; before it expires the node asks again, and the approved renewal is served without
// a restart.
func TestServingCertificateFromApprovedCSR(t *testing.T) {
	t.Parallel()
	const name = "e2e-serving-node"
	ctx := context.Background()
	rootDir := t.TempDir()
	port := framework.FreePort(t)
	kubelet := framework.StartProcess(t, minikubelet,
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(port), "--rotate-server-certificates", "-v", "2")
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}) })
	framework.Eventually(t, time.Minute, "the node to be Ready", func() (bool, string) { return ready(name) })

	first := pendingServingCSR(t, name, "")
	// Not approved by anyone but us: still pending after kcm had time to act.
	time.Sleep(3 * time.Second)
	if c, _ := cluster.Client.CertificatesV1().CertificateSigningRequests().Get(ctx, first, metav1.GetOptions{}); len(c.Status.Conditions) != 0 {
		t.Fatalf("serving CSR %s has conditions %v without an admin's approval", first, c.Status.Conditions)
	}
	if _, err := servedCert(port); err == nil {
		t.Fatal("the kubelet API completed a TLS handshake before it had a serving certificate")
	}
	if !strings.Contains(kubelet.Log(), "kubectl certificate approve "+first) {
		t.Errorf("the log does not tell how to approve %s:\n%s", first, kubelet.Log())
	}

	approve(t, first)
	var cert *x509.Certificate
	framework.Eventually(t, time.Minute, "the approved certificate to be served", func() (bool, string) {
		c, err := servedCert(port)
		if err != nil {
			return false, err.Error()
		}
		cert = c
		return true, ""
	})
	if cert.Subject.CommonName != "system:node:"+name || len(cert.IPAddresses) == 0 || cert.IPAddresses[0].String() != "127.0.0.1" {
		t.Errorf("served certificate: subject %q, IPs %v; want system:node:%s and 127.0.0.1", cert.Subject, cert.IPAddresses, name)
	}
	current := filepath.Join(rootDir, "pki", "kubelet-server-current.pem")
	if fi, err := os.Stat(current); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v (err %v), want mode 0600", current, fi, err)
	}

	// The test cluster signs for 3 minutes: at 70–90% of that the node asks again.
	second := pendingServingCSR(t, name, first)
	approve(t, second)
	framework.Eventually(t, time.Minute, "the renewed certificate to be served", func() (bool, string) {
		c, err := servedCert(port)
		if err != nil {
			return false, err.Error()
		}
		return c.SerialNumber.Cmp(cert.SerialNumber) != 0, "serial still " + fmt.Sprint((*big.Int)(c.SerialNumber))
	})
	if kubelet.Exited() {
		t.Error("the kubelet exited during serving certificate rotation")
	}
}

// pendingServingCSR waits for a kubelet-serving CSR of the node other than skip, and returns its name.
func pendingServingCSR(t *testing.T, node, skip string) string {
	t.Helper()
	var name string
	framework.Eventually(t, 4*time.Minute, "a kubelet-serving CSR from "+node, func() (bool, string) {
		list, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range list.Items {
			if c.Spec.SignerName == certificatesv1.KubeletServingSignerName && c.Spec.Username == "system:node:"+node && c.Name != skip {
				name = c.Name
				return true, ""
			}
		}
		return false, "none yet"
	})
	return name
}

// approve does what `kubectl certificate approve` does.
func approve(t *testing.T, name string) {
	t.Helper()
	c, err := cluster.Client.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.ApproveCSR(c); err != nil {
		t.Fatal(err)
	}
}

// servedCert connects to the kubelet API, verifying it against the cluster CA for 127.0.0.1, and
// returns the certificate it serves; an anonymous request must then get 401 from the live server.
func servedCert(port int) (*x509.Certificate, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cluster.RestConfig.CAData) {
		return nil, fmt.Errorf("no cluster CA in the admin config")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://127.0.0.1:" + strconv.Itoa(port) + "/pods")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, fmt.Errorf("anonymous GET /pods: %s, want 401", resp.Status)
	}
	return resp.TLS.PeerCertificates[0], nil
}

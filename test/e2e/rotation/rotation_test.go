// Package rotation tests client certificate rotation end to end. It has its own control plane,
// whose kube-controller-manager signs kubelet certificates for only 3 minutes, so a rotation
// happens within a test's time.
package rotation

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string
)

func TestMain(m *testing.M) {
	os.Exit(framework.MainWithMinikubelet(m.Run, framework.Options{ClusterSigningDuration: 3 * time.Minute}, &cluster, &minikubelet))
}

func currentCert(t *testing.T, certDir string) (*x509.Certificate, string) {
	t.Helper()
	target, err := os.Readlink(filepath.Join(certDir, "kubelet-client-current.pem"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(certDir, target))
	if err != nil {
		t.Fatal(err)
	}
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return cert, target
		}
	}
	t.Fatalf("no certificate in %s", target)
	return nil, ""
}

// Upstream certificate manager behaviour: at 70–90% of its life the client certificate is
// renewed with the node's own identity (auto-approved as selfnodeclient), swapped in without a
// restart, and the node keeps heartbeating past the old certificate's expiry.
func TestClientCertificateRotatesBeforeExpiry(t *testing.T) {
	t.Parallel()
	const name = "e2e-rotating-node"
	ctx := context.Background()
	rootDir := t.TempDir()
	kubelet := framework.StartProcess(t, minikubelet,
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)), "-v", "2")
	certDir := filepath.Join(rootDir, "pki")
	framework.Eventually(t, time.Minute, "the node to be Ready", func() (bool, string) { return ready(name) })

	first, firstFile := currentCert(t, certDir)
	t.Logf("first certificate %s valid until %s", firstFile, first.NotAfter)
	if life := time.Until(first.NotAfter); life > 4*time.Minute {
		t.Fatalf("the first certificate lives %s; the test cluster should sign for 3m", life)
	}

	// The symlink moves to a new certificate before the first one expires.
	var second *x509.Certificate
	framework.Eventually(t, time.Until(first.NotAfter), "a rotated certificate", func() (bool, string) {
		cert, file := currentCert(t, certDir)
		if file == firstFile {
			return false, "still " + file
		}
		second = cert
		return true, ""
	})
	if second.NotAfter.Before(first.NotAfter) || second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Errorf("rotated certificate %v (until %s) is not newer than %v (until %s)", second.SerialNumber, second.NotAfter, first.SerialNumber, first.NotAfter)
	}

	// The renewal CSR was made by the node itself, not with the bootstrap token.
	list, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byNode := 0
	for _, csr := range list.Items {
		if csr.Spec.Username == "system:node:"+name {
			byNode++
		}
	}
	if byNode == 0 {
		t.Errorf("no CSR was made by system:node:%s", name)
	}

	// Past the first certificate's expiry, the same process still renews its Lease: its
	// connections were re-established with the new certificate.
	time.Sleep(time.Until(first.NotAfter.Add(5 * time.Second)))
	framework.Eventually(t, time.Minute, "a lease renewal after the first certificate expired", func() (bool, string) {
		l, err := cluster.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return l.Spec.RenewTime.After(first.NotAfter), "renewTime " + l.Spec.RenewTime.String()
	})
	if ok, msg := ready(name); !ok {
		t.Errorf("node not Ready after the rotation: %s", msg)
	}
	if kubelet.Exited() {
		t.Error("the kubelet restarted or exited during rotation")
	}
}

func ready(name string) (bool, string) {
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, fmt.Sprintf("Ready=%s %s", c.Status, c.Message)
		}
	}
	return false, "no Ready condition"
}

package framework

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// KubeletAPI is one node's kubelet API on 127.0.0.1:Port, whose serving certificate Roots
// verifies (for the name 127.0.0.1).
type KubeletAPI struct {
	Port  int
	Roots *x509.CertPool
}

// SelfSignedKubeletAPI is the kubelet API of a node whose serving certificate is self-signed (as
// upstream's default, without --rotate-server-certificates): it trusts exactly
// <rootDir>/pki/kubelet.crt.
func SelfSignedKubeletAPI(rootDir string, port int) (KubeletAPI, error) {
	path := filepath.Join(rootDir, "pki", "kubelet.crt")
	serving, err := os.ReadFile(path)
	if err != nil {
		return KubeletAPI{}, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(serving) {
		return KubeletAPI{}, fmt.Errorf("no certificate in %s", path)
	}
	return KubeletAPI{Port: port, Roots: roots}, nil
}

// TryGet GETs path as the holder of certs (none: anonymous) and returns the status code and body.
// It may be called from any goroutine.
func (k KubeletAPI) TryGet(path string, certs ...tls.Certificate) (int, string, error) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: k.Roots, Certificates: certs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: tr}).Get(fmt.Sprintf("https://127.0.0.1:%d%s", k.Port, path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// Get is TryGet that fails the test when the request cannot be made.
func (k KubeletAPI) Get(t *testing.T, path string, certs ...tls.Certificate) (int, string) {
	t.Helper()
	code, body, err := k.TryGet(path, certs...)
	if err != nil {
		t.Fatal(err)
	}
	return code, body
}

// AdminCert is the cluster admin's client certificate (from admin.kubeconfig, O=system:masters),
// which the kubelet API authenticates by x509 and authorizes by SubjectAccessReview.
func (c *Cluster) AdminCert() (tls.Certificate, error) {
	return tls.X509KeyPair(c.RestConfig.CertData, c.RestConfig.KeyData)
}

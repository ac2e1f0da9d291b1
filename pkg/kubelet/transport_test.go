package kubelet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// writeCert writes a self-signed certificate for cn and its key, and returns their paths.
func writeCert(t *testing.T, dir, cn string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// Handshakes present the client certificate as it is on disk; after a rotation (reload) they
// present the new one, as upstream's certificate manager hands out the current certificate.
func TestClientCertFollowsRotation(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, "system:node:a")
	c := newClientTransport(certFile, keyFile)
	subject := func() string {
		cert, err := c.clientCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	if got := subject(); got != "system:node:a" {
		t.Fatalf("first certificate %q", got)
	}
	writeCert(t, dir, "system:node:a-rotated")
	if got := subject(); got != "system:node:a" {
		t.Errorf("before reload: %q, want the certificate in use", got)
	}
	c.rotated()
	if got := subject(); got != "system:node:a-rotated" {
		t.Errorf("after reload: %q, want the rotated one", got)
	}
}

// The transport verifies the API server with the kubeconfig's CA — a kubeconfig without one is
// refused, never used unverified — and takes the client certificate from the callback.
func TestClientTransport(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, "system:node:a")
	caPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	c := newClientTransport(certFile, keyFile)
	noCA := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CertFile: certFile, KeyFile: keyFile}}
	if _, err := c.config(noCA); err == nil || !strings.Contains(err.Error(), "certificate-authority") {
		t.Errorf("no CA: err = %v, want a refusal naming the certificate-authority", err)
	}
	withCA := rest.CopyConfig(noCA)
	withCA.CAData = caPEM
	out, err := c.config(withCA)
	if err != nil {
		t.Fatal(err)
	}
	if out.CertFile != "" || len(out.CAData) != 0 || out.Transport == nil {
		t.Errorf("the config keeps TLS options beside its transport: %+v", out.TLSClientConfig)
	}
	if _, err := rest.HTTPClientFor(out); err != nil {
		t.Errorf("client-go refuses the config: %v", err)
	}
	tlsCfg := out.Transport.(*http.Transport).TLSClientConfig
	if tlsCfg.RootCAs == nil || tlsCfg.InsecureSkipVerify || tlsCfg.GetClientCertificate == nil {
		t.Errorf("transport TLS: RootCAs set %v, InsecureSkipVerify %v, GetClientCertificate set %v", tlsCfg.RootCAs != nil, tlsCfg.InsecureSkipVerify, tlsCfg.GetClientCertificate != nil)
	}
}

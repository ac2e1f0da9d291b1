package server

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// Pins upstream InitializeTLS: without tlsCertFile the kubelet generates a self-signed
// certificate into --cert-dir as kubelet.crt/kubelet.key once, and reuses it on restart.
// Ours also replaces it once it has expired (GenerateSelfSignedCertKey makes it valid one year).
func TestSelfSignedServingCert(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	clk := testingclock.NewFakePassiveClock(time.Now())
	cfg := openConfig(t, &fakeHost{}, &fakeStreaming{})
	cfg.CertDir = dir
	cfg.Hostnames = []string{"node-a.example"}
	cfg.NodeIPs = []net.IP{net.ParseIP("10.0.0.7")}
	cfg.Clock = clk

	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !s.servingCert.generated || !s.servingCert.selfSigned {
		t.Errorf("first start: servingCert = %+v, want a generated self-signed certificate", s.servingCert)
	}
	certFile, keyFile := filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
	first := readFile(t, certFile)
	assertMode(t, keyFile, 0o600)
	assertMode(t, certFile, 0o644)
	leaf := parseLeaf(t, first)
	if err := leaf.VerifyHostname(testNode); err != nil {
		t.Errorf("certificate does not name the node: %v", err)
	}
	if err := leaf.VerifyHostname("node-a.example"); err != nil {
		t.Errorf("certificate does not name the hostname: %v", err)
	}
	if err := leaf.VerifyHostname("10.0.0.7"); err != nil {
		t.Errorf("certificate does not name the node IP: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("cert dir holds %d entries, want only kubelet.crt and kubelet.key (no temp files)", len(entries))
	}

	// Restart: the same certificate and key are reused.
	s, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.servingCert.generated {
		t.Error("second start generated a new certificate, want the one on disk reused")
	}
	if !bytes.Equal(readFile(t, certFile), first) {
		t.Error("kubelet.crt changed on the second start")
	}

	// After it expires, a new one replaces it.
	clk.SetTime(leaf.NotAfter.Add(time.Minute))
	s, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !s.servingCert.generated || bytes.Equal(readFile(t, certFile), first) {
		t.Error("an expired certificate was reused, want a new one")
	}
	assertMode(t, keyFile, 0o600)

	// A corrupt key is replaced rather than failing the start.
	if err := os.WriteFile(keyFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err = New(cfg); err != nil || !s.servingCert.generated {
		t.Errorf("corrupt key: New = %v, generated %v; want a new pair", err, s != nil && s.servingCert.generated)
	}
}

// Pins that configured files are used as they are and never overwritten.
func TestConfiguredServingCert(t *testing.T) {
	gen := openConfig(t, &fakeHost{}, &fakeStreaming{})
	if _, err := New(gen); err != nil {
		t.Fatal(err)
	}
	cfg := openConfig(t, &fakeHost{}, &fakeStreaming{})
	cfg.TLSCertFile = filepath.Join(gen.CertDir, "kubelet.crt")
	cfg.TLSKeyFile = filepath.Join(gen.CertDir, "kubelet.key")
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.servingCert.selfSigned || s.servingCert.generated || s.servingCert.certFile != cfg.TLSCertFile {
		t.Errorf("servingCert = %+v, want the configured file", s.servingCert)
	}
	if entries, _ := os.ReadDir(cfg.CertDir); len(entries) != 0 {
		t.Errorf("CertDir has %d entries, want none when TLSCertFile is set", len(entries))
	}

	cfg.TLSKeyFile = filepath.Join(t.TempDir(), "missing.key")
	if _, err := New(cfg); err == nil {
		t.Error("New with a missing key file succeeded, want an error")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %o, want %o", filepath.Base(path), got, want)
	}
}

func parseLeaf(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no PEM block in certificate file")
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

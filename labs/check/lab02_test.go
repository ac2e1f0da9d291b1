package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lab 02: the CSR that got the certificate, and the one the student denied, are found by the
// bootstrap token's user and the requested CN.
func TestCSRs(t *testing.T) {
	csrFor := func(name, user, cn string, conds ...certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequest {
		return testCSR(t, name, user, cn, conds...)
	}
	pendingOnly := []certificatesv1.CertificateSigningRequest{csrFor("csr-1", "system:bootstrap:abc", "system:node:n")}
	otherToken := []certificatesv1.CertificateSigningRequest{csrFor("csr-2", "system:bootstrap:zzz", "system:node:n", certificatesv1.CertificateApproved)}
	otherNode := []certificatesv1.CertificateSigningRequest{csrFor("csr-3", "system:bootstrap:abc", "system:node:m", certificatesv1.CertificateApproved)}
	good := []certificatesv1.CertificateSigningRequest{csrFor("csr-4", "system:bootstrap:abc", "system:node:n", certificatesv1.CertificateApproved)}
	denied := []certificatesv1.CertificateSigningRequest{csrFor("csr-5", "system:bootstrap:abc", "system:node:x", certificatesv1.CertificateDenied)}
	for name, csrs := range map[string][]certificatesv1.CertificateSigningRequest{"pending": pendingOnly, "other token": otherToken, "other node": otherNode} {
		if r := approvedCSR(csrs, "abc", "n"); r.ok {
			t.Errorf("%s: approvedCSR passed: %s", name, r)
		}
	}
	if r := approvedCSR(good, "abc", "n"); !r.ok || !strings.Contains(r.what, "csr-4") {
		t.Errorf("approvedCSR(good) = %s", r)
	}
	if r := deniedCSR(good, "abc"); r.ok || !strings.Contains(r.fix, "certificate deny") {
		t.Errorf("deniedCSR without a denied CSR = %s", r)
	}
	if r := deniedCSR(denied, "abc"); !r.ok || !strings.Contains(r.what, "system:node:x") {
		t.Errorf("deniedCSR(denied) = %s", r)
	}
}

// Lab 02: the current certificate is a symlink to a dated file with mode 0600.
func TestClientCertFiles(t *testing.T) {
	dir := t.TempDir()
	if r := clientCertFiles(dir); r.ok || !strings.Contains(r.what, "no client certificate") {
		t.Errorf("empty dir: %s", r)
	}
	dated := filepath.Join(dir, "kubelet-client-2026-01-01-00-00-00.pem")
	if err := os.WriteFile(dated, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(dated), filepath.Join(dir, "kubelet-client-current.pem")); err != nil {
		t.Fatal(err)
	}
	if r := clientCertFiles(dir); r.ok || !strings.Contains(r.what, "mode 0644") {
		t.Errorf("mode 0644: %s", r)
	}
	if err := os.Chmod(dated, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := clientCertFiles(dir); !r.ok {
		t.Errorf("good files: %s", r)
	}
}

// testCSR is a kubelet client CSR named name, by user, for the CN cn, with the conditions conds.
func testCSR(t *testing.T, name, user, cn string, conds ...certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.CertificateSigningRequestSpec{
		Username: user, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
	}}
	for _, c := range conds {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: c})
		if c == certificatesv1.CertificateApproved {
			csr.Status.Certificate = []byte("issued")
		}
	}
	return csr
}

// Lab 02, exercise 3 skipped or left half done: make run's own CSR was approved, and a second
// node's CSR stays Pending (the binding was deleted) but nobody denied it. The check fails until a
// CSR of the bootstrap token is Denied, and says how.
func TestLab02SkippedDeny(t *testing.T) {
	own := testCSR(t, "csr-own", "system:bootstrap:abc", "system:node:n", certificatesv1.CertificateApproved)
	pending := testCSR(t, "csr-second", "system:bootstrap:abc", "system:node:lab02-denied")
	denied := testCSR(t, "csr-second", "system:bootstrap:abc", "system:node:lab02-denied", certificatesv1.CertificateDenied)
	tests := []struct {
		name string
		csrs []certificatesv1.CertificateSigningRequest
		ok   bool
	}{
		{"exercise 3 skipped: only the node's own CSR", []certificatesv1.CertificateSigningRequest{own}, false},
		{"the second node's CSR left Pending", []certificatesv1.CertificateSigningRequest{own, pending}, false},
		{"done: the second node's CSR denied", []certificatesv1.CertificateSigningRequest{own, denied}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := deniedCSR(tc.csrs, "abc")
			if r.ok != tc.ok || (!r.ok && !strings.Contains(r.fix, "do exercise 3")) {
				t.Errorf("got %s, want ok=%v (and a fix naming exercise 3)", r, tc.ok)
			}
		})
	}
}

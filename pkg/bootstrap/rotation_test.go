package bootstrap

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"
)

// A client certificate that is not due yet is left alone: the rotator finds it under its own
// prefix and waits until the deadline.
func TestClientRotatorWaitsForDeadline(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	certPEM, keyPEM := selfSigned(t, now.Add(-time.Hour), now.Add(9*time.Hour))
	if _, err := clientStore(dir).update(certPEM, keyPEM, now); err != nil {
		t.Fatal(err)
	}
	r, err := NewRotator(RotatorConfig{Client: fake.NewClientset(), CertDir: dir, NodeName: "n1", Jitter: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	r.request = func(context.Context) ([]byte, []byte, error) {
		t.Fatal("requested a certificate that is not due")
		return nil, nil, nil
	}
	wait, err := r.rotateIfDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 70% of 10 h from notBefore is 6 h after it, i.e. about 5 h from now.
	if wait < 4*time.Hour || wait > 6*time.Hour {
		t.Errorf("wait %s, want about 5h", wait)
	}
}

// The serving certificate: none at first (GetCertificate fails, so handshakes fail), requested at
// once, then stored under kubelet-server-* (0600) and served.
func TestServingCertRequestsWhenMissing(t *testing.T) {
	dir := t.TempDir()
	s, err := NewServingCert(ServingConfig{Client: fake.NewClientset(), CertDir: dir, NodeName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCertificate(nil); err == nil {
		t.Fatal("GetCertificate succeeded before any certificate was issued")
	}
	now := time.Now()
	certPEM, keyPEM := selfSigned(t, now.Add(-time.Minute), now.Add(time.Hour))
	requests := 0
	s.rotator.request = func(context.Context) ([]byte, []byte, error) { requests++; return certPEM, keyPEM, nil }
	if _, err := s.rotator.rotateIfDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if requests != 1 {
		t.Fatalf("%d requests, want 1", requests)
	}
	cert, err := s.GetCertificate(nil)
	if err != nil || cert.Leaf == nil || cert.Leaf.NotAfter.Unix() != now.Add(time.Hour).Unix() {
		t.Fatalf("GetCertificate = %v, %v; want the issued certificate", cert, err)
	}
	if s.CurrentPath() != filepath.Join(dir, "kubelet-server-current.pem") {
		t.Errorf("CurrentPath %s", s.CurrentPath())
	}
	if fi, err := os.Stat(s.CurrentPath()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v, want mode 0600", s.CurrentPath(), fi, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "kubelet-client-current.pem")); err == nil {
		t.Error("the serving certificate was stored as the client certificate")
	}
}

// The serving certificate's timing follows the injected clock: a certificate from an earlier run
// is served while the clock is before its notAfter and its rotation is scheduled at 70% of its
// lifetime from the clock's now; once the clock passes notAfter, a new ServingCert does not serve
// it (as client-go's certificate manager refuses an expired certificate).
func TestServingCertUsesTheClock(t *testing.T) {
	dir := t.TempDir()
	notBefore := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	certPEM, keyPEM := selfSigned(t, notBefore, notBefore.Add(10*time.Hour))
	if _, err := (store{certDir: dir, prefix: servingPrefix}).update(certPEM, keyPEM, notBefore); err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(notBefore.Add(time.Hour))
	s, err := NewServingCert(ServingConfig{Client: fake.NewClientset(), CertDir: dir, NodeName: "n1", Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCertificate(nil); err != nil {
		t.Fatalf("GetCertificate = %v before notAfter, want the stored certificate", err)
	}
	s.rotator.cfg.Jitter = func() float64 { return 0 }
	wait, err := s.rotator.rotateIfDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := 6 * time.Hour; wait != want { // 70% of 10 h after notBefore is 7 h; the clock is at 1 h
		t.Errorf("rotation in %s, want %s", wait, want)
	}

	clk.SetTime(notBefore.Add(11 * time.Hour))
	s, err = NewServingCert(ServingConfig{Client: fake.NewClientset(), CertDir: dir, NodeName: "n1", Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCertificate(nil); err == nil {
		t.Error("GetCertificate served a certificate the clock says has expired")
	}
}

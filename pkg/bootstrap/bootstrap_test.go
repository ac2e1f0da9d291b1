package bootstrap

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Upstream certificate manager: rotate after 70% to 90% of the lifetime, jittered.
func TestNextRotationDeadline(t *testing.T) {
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	na := nb.Add(100 * time.Hour)
	for _, tc := range []struct {
		jitter float64
		want   time.Duration
	}{{0, 70 * time.Hour}, {0.5, 80 * time.Hour}, {0.999999999, 90 * time.Hour}} {
		got := nextRotationDeadline(nb, na, tc.jitter).Sub(nb)
		if diff := got - tc.want; diff > time.Millisecond || diff < -time.Millisecond {
			t.Errorf("jitter %v: deadline after %s, want %s", tc.jitter, got, tc.want)
		}
	}
}

func TestRetryBackoff(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	var b time.Duration
	for i, w := range want {
		if b = retryBackoff(b); b != w {
			t.Errorf("retry %d: %s, want %s", i, b, w)
		}
	}
	if got := retryBackoff(4 * time.Minute); got != 5*time.Minute {
		t.Errorf("cap: %s, want 5m", got)
	}
}

func selfSigned(t *testing.T, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:node:n1"}, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return encodePEM("CERTIFICATE", der), encodePEM("EC PRIVATE KEY", keyDER)
}

// The store keeps kubelet-client-<ts>.pem (0600) and swaps kubelet-client-current.pem to it;
// a kubeconfig pointing at the symlink is reused while the cert is valid, refused once expired.
func TestStoreAndKubeconfigReuse(t *testing.T) {
	dir := t.TempDir()
	st := clientStore(filepath.Join(dir, "pki"))
	now := time.Now()
	certPEM, keyPEM := selfSigned(t, now.Add(-time.Hour), now.Add(time.Hour))
	path, err := st.update(certPEM, keyPEM, now)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode %v, want 0600", path, fi.Mode().Perm())
	}
	if target, _ := os.Readlink(st.currentPath()); target != filepath.Base(path) {
		t.Errorf("current -> %q, want %q", target, filepath.Base(path))
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, "https://127.0.0.1:6443", certPEM, st.currentPath()); err != nil {
		t.Fatal(err)
	}
	if cfg, reason := loadValidKubeconfig(kubeconfig, now); cfg == nil {
		t.Fatalf("valid kubeconfig refused: %s", reason)
	}
	if cfg, reason := loadValidKubeconfig(kubeconfig, now.Add(2*time.Hour)); cfg != nil || !strings.Contains(reason, "expired") {
		t.Errorf("expired cert: cfg %v reason %q, want refused as expired", cfg != nil, reason)
	}

	// A second certificate: the link moves, the old file stays (as upstream's store).
	certPEM2, keyPEM2 := selfSigned(t, now, now.Add(2*time.Hour))
	path2, err := st.update(certPEM2, keyPEM2, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := st.current()
	if err != nil || !cur.NotAfter.Equal(now.Add(2*time.Hour).Truncate(time.Second)) {
		t.Errorf("current cert after update: %v (err %v)", cur.NotAfter, err)
	}
	if _, err := os.Stat(path); err != nil || path == path2 {
		t.Errorf("old cert file gone or same name: %v", err)
	}
	// A mismatched key is refused and the link is untouched.
	if _, err := st.update(certPEM, keyPEM2, now.Add(2*time.Second)); err == nil {
		t.Error("a certificate that does not match the key was stored")
	}
}

func TestCheckWritable(t *testing.T) {
	if err := (clientStore("/proc/minikubelet-test")).checkWritable(); err == nil || !strings.Contains(err.Error(), "--cert-dir") {
		t.Errorf("unwritable cert dir: %v", err)
	}
	if err := (clientStore(filepath.Join(t.TempDir(), "a", "b"))).checkWritable(); err != nil {
		t.Error(err)
	}
}

// kubeadm init's kubelet.conf embeds the node's certificate (client-certificate-data): it is used
// without a bootstrap, written to the store as kubelet-client-current.pem, and the clients use
// that file; a newer certificate already in the store wins over the embedded one (as upstream).
func TestEmbeddedClientCertificate(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	certPEM, keyPEM := selfSigned(t, now.Add(-time.Hour), now.Add(time.Hour))
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: certPEM}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	kubeconfig := filepath.Join(dir, "kubelet.conf")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	bc := Config{Kubeconfig: kubeconfig, CertDir: filepath.Join(dir, "pki"), NodeName: "n1"}
	got, err := LoadOrBootstrap(context.Background(), bc)
	if err != nil {
		t.Fatalf("embedded certificate refused: %v", err)
	}
	st := clientStore(bc.CertDir)
	if got.CertFile != st.currentPath() || len(got.CertData) != 0 {
		t.Errorf("client uses CertFile %q (data %d bytes), want the store's %q", got.CertFile, len(got.CertData), st.currentPath())
	}
	if data, err := os.ReadFile(st.currentPath()); err != nil || !strings.Contains(string(data), string(certPEM)) {
		t.Fatalf("kubelet-client-current.pem does not hold the embedded certificate (err %v)", err)
	}
	newer, newerKey := selfSigned(t, now, now.Add(3*time.Hour))
	if _, err := st.update(newer, newerKey, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrBootstrap(context.Background(), bc); err != nil {
		t.Fatal(err)
	}
	if cur, err := st.current(); err != nil || !cur.NotAfter.Equal(now.Add(3*time.Hour).Truncate(time.Second)) {
		t.Errorf("after a restart the store's newer certificate was replaced: %v (err %v)", cur, err)
	}
}

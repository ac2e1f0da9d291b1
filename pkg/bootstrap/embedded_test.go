package bootstrap

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

// writeEmbeddedKubeconfig writes a kubeconfig as kubeadm init writes /etc/kubernetes/kubelet.conf:
// the CA, client-certificate-data and client-key-data inline.
func writeEmbeddedKubeconfig(t *testing.T, path string, certPEM, keyPEM []byte) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubernetes"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: certPEM}
	cfg.AuthInfos["system:node:n1"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["system:node:n1@kubernetes"] = &clientcmdapi.Context{Cluster: "kubernetes", AuthInfo: "system:node:n1"}
	cfg.CurrentContext = "system:node:n1@kubernetes"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// kubeadm init starts the kubelet with a kubelet.conf whose certificate is embedded and no
// bootstrap kubeconfig. As upstream, the pair goes into --cert-dir as kubelet-client-current.pem
// (which kubeadm's kubelet-finalize phase looks for), the kubelet uses that file, and the
// kubeconfig is not rewritten; on the next start a certificate already in the store (a rotated
// one) wins over the embedded one.
func TestEmbeddedKubeconfigSeedsTheStore(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	now := time.Now()
	certPEM, keyPEM := selfSigned(t, now.Add(-time.Hour), now.Add(time.Hour))
	kubeconfig := filepath.Join(dir, "kubelet.conf")
	writeEmbeddedKubeconfig(t, kubeconfig, certPEM, keyPEM)
	before, _ := os.ReadFile(kubeconfig)
	cfg := Config{Kubeconfig: kubeconfig, BootstrapKubeconfig: filepath.Join(dir, "bootstrap-kubelet.conf"), // absent on init
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1", Clock: testingclock.NewFakeClock(now)}
	restCfg, err := LoadOrBootstrap(ctx, cfg)
	if err != nil {
		t.Fatalf("kubeadm's kubelet.conf refused: %v", err)
	}
	current := filepath.Join(dir, "pki", "kubelet-client-current.pem")
	if restCfg.CertFile != current || restCfg.KeyFile != current || len(restCfg.CertData) != 0 {
		t.Errorf("client cert %q key %q (data %d bytes), want the store's %s", restCfg.CertFile, restCfg.KeyFile, len(restCfg.CertData), current)
	}
	stored, err := os.ReadFile(current)
	if err != nil || string(stored) != string(certPEM)+string(keyPEM) {
		t.Errorf("kubelet-client-current.pem does not hold the embedded pair: %v", err)
	}
	if after, _ := os.ReadFile(kubeconfig); string(after) != string(before) {
		t.Error("the kubeconfig was rewritten; kubeadm's kubelet-finalize owns it")
	}

	// A rotated certificate in the store wins on the next start.
	rotated, rotatedKey := selfSigned(t, now.Add(-time.Minute), now.Add(2*time.Hour))
	if _, err := clientStore(cfg.CertDir).update(rotated, rotatedKey, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrBootstrap(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if cur, err := clientStore(cfg.CertDir).current(); err != nil || !cur.NotAfter.Equal(now.Add(2*time.Hour).Truncate(time.Second)) {
		t.Errorf("current certificate after restart: %v (%v), want the rotated one", cur, err)
	}
}

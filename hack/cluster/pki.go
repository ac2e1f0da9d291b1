package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the set of files a local control plane needs, all under one directory:
//
//	ca.crt/ca.key                     the cluster CA (signs everything below, and kcm signs kubelet CSRs with it)
//	front-proxy-ca.crt/.key           the request-header CA of the aggregation layer (no proxy uses it yet)
//	apiserver.crt/.key                kube-apiserver serving cert, SANs 127.0.0.1, ::1, localhost, kubernetes.default…
//	admin.crt/.key                    cluster admin client cert (O=system:masters)
//	apiserver-kubelet-client.crt/.key kube-apiserver → kubelet client cert (exec, logs, port-forward)
//	controller-manager.crt/.key       kube-controller-manager client + serving cert
//	scheduler.crt/.key                kube-scheduler client + serving cert
//	sa.key/sa.pub                     service-account token signing key pair
type pki struct{ dir string }

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// generate writes a fresh PKI. Keys are written 0600.
func (p pki) generate() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	now := time.Now()
	caCert, caKey, err := p.newCA("ca", "minikubelet-local-ca", now)
	if err != nil {
		return err
	}
	// A separate CA for the aggregation layer's request headers, as kubeadm does; kcm and the
	// scheduler read it from the extension-apiserver-authentication ConfigMap.
	if _, _, err := p.newCA("front-proxy-ca", "minikubelet-front-proxy-ca", now); err != nil {
		return err
	}

	serverUsage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	clientUsage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	bothUsage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	loopbackIPs := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP(serviceAPIIP)}
	leafs := []struct {
		name  string
		cn    string
		orgs  []string
		usage []x509.ExtKeyUsage
		dns   []string
		ips   []net.IP
	}{
		{"apiserver", "kube-apiserver", nil, serverUsage,
			[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}, loopbackIPs},
		{"admin", "kubernetes-admin", []string{"system:masters"}, clientUsage, nil, nil},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"kubeadm:cluster-admins"}, clientUsage, nil, nil},
		{"controller-manager", "system:kube-controller-manager", nil, bothUsage, []string{"localhost"}, loopbackIPs},
		{"scheduler", "system:kube-scheduler", nil, bothUsage, []string{"localhost"}, loopbackIPs},
	}
	for i, l := range leafs {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 2)),
			Subject:      pkix.Name{CommonName: l.cn, Organization: l.orgs},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(365 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:  l.usage,
			DNSNames:     l.dns,
			IPAddresses:  l.ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
		if err != nil {
			return fmt.Errorf("sign %s certificate: %w", l.name, err)
		}
		if err := writeCertAndKey(p.path(l.name), der, key); err != nil {
			return err
		}
	}

	// Service-account tokens are signed with RSA (RS256), as upstream.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := writePEM(p.path("sa.pub"), "PUBLIC KEY", pubDER, 0o644); err != nil {
		return err
	}
	return writePEM(p.path("sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey), 0o600)
}

// newCA writes a self-signed CA as <name>.crt/.key and returns it.
func (p pki) newCA(name, cn string, now time.Time) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, writeCertAndKey(p.path(name), der, key)
}

func writeCertAndKey(base string, certDER []byte, key crypto.Signer) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(base+".key", "PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(base+".crt", "CERTIFICATE", certDER, 0o644)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

// writeFileAtomic writes to a temporary file in the same directory and renames it into place, so a
// reader never sees a half-written file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

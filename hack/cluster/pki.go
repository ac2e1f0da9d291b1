package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
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
//	front-proxy-ca.crt/.key           the request-header CA of the aggregation layer
//	front-proxy-client.crt/.key       kube-apiserver's client cert when it proxies to an aggregated API server
//	apiserver.crt/.key                kube-apiserver serving cert, SANs 127.0.0.1, ::1, localhost, kubernetes.default…
//	admin.crt/.key                    cluster admin client cert (O=system:masters)
//	apiserver-kubelet-client.crt/.key kube-apiserver → kubelet client cert (exec, logs, port-forward)
//	controller-manager.crt/.key       kube-controller-manager client + serving cert
//	scheduler.crt/.key                kube-scheduler client + serving cert
//	sa.key/sa.pub                     service-account token signing key pair
//	metrics-server.crt/.key           metrics-server's serving + client cert (issued by `cluster metrics-server`)
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
	fpCert, fpKey, err := p.newCA("front-proxy-ca", "minikubelet-front-proxy-ca", now)
	if err != nil {
		return err
	}

	loopbackIPs := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP(serviceAPIIP)}
	for _, l := range []leaf{
		{name: "apiserver", cn: "kube-apiserver", usage: serverUsage,
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}, ips: loopbackIPs},
		{name: "admin", cn: "kubernetes-admin", orgs: []string{"system:masters"}, usage: clientUsage},
		{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"kubeadm:cluster-admins"}, usage: clientUsage},
		{name: "controller-manager", cn: "system:kube-controller-manager", usage: bothUsage, dns: []string{"localhost"}, ips: loopbackIPs},
		{name: "scheduler", cn: "system:kube-scheduler", usage: bothUsage, dns: []string{"localhost"}, ips: loopbackIPs},
	} {
		if err := p.issue(caCert, caKey, l, now); err != nil {
			return err
		}
	}
	// The aggregation layer: kube-apiserver proxies a request for an aggregated API (metrics.k8s.io)
	// with this client certificate and the user in X-Remote-User; the extension API server trusts
	// the headers because the certificate chains to the front-proxy CA and its CN is in
	// --requestheader-allowed-names.
	if err := p.issue(fpCert, fpKey, leaf{name: "front-proxy-client", cn: "front-proxy-client", usage: clientUsage}, now); err != nil {
		return err
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

var (
	serverUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	clientUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	bothUsage   = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
)

// leaf is one certificate a CA of the PKI issues, written as <name>.crt/.key.
type leaf struct {
	name  string
	cn    string
	orgs  []string
	usage []x509.ExtKeyUsage
	dns   []string
	ips   []net.IP
}

// issue signs l with the CA and writes it with a new key, valid for a year.
func (p pki) issue(ca *x509.Certificate, caKey crypto.Signer, l leaf, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: l.cn, Organization: l.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  l.usage,
		DNSNames:     l.dns,
		IPAddresses:  l.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("sign %s certificate: %w", l.name, err)
	}
	return writeCertAndKey(p.path(l.name), der, key)
}

// loadCA reads the CA <name>.crt/.key that generate wrote, to issue a certificate later.
func (p pki) loadCA(name string) (*x509.Certificate, crypto.Signer, error) {
	pair, err := tls.LoadX509KeyPair(p.path(name+".crt"), p.path(name+".key"))
	if err != nil {
		return nil, nil, fmt.Errorf("load the CA %s: %w", name, err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("the CA key %s.key cannot sign", name)
	}
	return pair.Leaf, signer, nil
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

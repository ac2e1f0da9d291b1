package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/minikubelet/minikubelet/pkg/atomicfile"
)

// Names of the self-signed serving certificate in CertDir, as upstream.
const (
	selfSignedCertName = "kubelet.crt"
	selfSignedKeyName  = "kubelet.key"
)

type servingCertInfo struct {
	certFile   string
	selfSigned bool
	generated  bool // true if New wrote a new self-signed certificate
}

// servingCertificate loads the serving certificate: the configured files, or the self-signed
// pair in CertDir, generated if missing or no longer usable. Upstream: InitializeTLS in
// cmd/kubelet/app/server.go.
func servingCertificate(cfg Config) (tls.Certificate, servingCertInfo, error) {
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return tls.Certificate{}, servingCertInfo{}, fmt.Errorf("load serving certificate %q and key %q (tlsCertFile, tlsPrivateKeyFile): %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
		return cert, servingCertInfo{certFile: cfg.TLSCertFile}, nil
	}

	certFile := filepath.Join(cfg.CertDir, selfSignedCertName)
	keyFile := filepath.Join(cfg.CertDir, selfSignedKeyName)
	info := servingCertInfo{certFile: certFile, selfSigned: true}

	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err == nil && certValidAt(cert, cfg.Clock.Now()) {
		return cert, info, nil // reuse, as upstream does while it can read both files
	}
	// Missing, expired, corrupt, or a torn pair (a crash between the two renames below):
	// generate a new pair. Only this function writes these files, so replacing them is safe.
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isUnusablePair(err) {
		return tls.Certificate{}, servingCertInfo{}, fmt.Errorf("read self-signed serving certificate in %q: %w", cfg.CertDir, err)
	}

	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(cfg.NodeName, cfg.NodeIPs, cfg.Hostnames)
	if err != nil {
		return tls.Certificate{}, servingCertInfo{}, fmt.Errorf("generate self-signed serving certificate for node %q: %w", cfg.NodeName, err)
	}
	// 0700, as TLS bootstrap creates it: the directory holds private keys (ours and the client's).
	if err := os.MkdirAll(cfg.CertDir, 0o700); err != nil {
		return tls.Certificate{}, servingCertInfo{}, fmt.Errorf("create cert dir %q: %w", cfg.CertDir, err)
	}
	// The key first: a cert without its key on disk is never reused (LoadX509KeyPair fails).
	if err := atomicfile.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, servingCertInfo{}, err
	}
	if err := atomicfile.WriteFile(certFile, certPEM, 0o644); err != nil {
		return tls.Certificate{}, servingCertInfo{}, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, servingCertInfo{}, fmt.Errorf("parse generated serving certificate: %w", err)
	}
	info.generated = true
	return cert, info, nil
}

// isUnusablePair reports whether err from tls.LoadX509KeyPair means the files were read but do
// not hold a usable pair (as opposed to, say, a permission error, which a user must fix).
func isUnusablePair(err error) bool {
	var pathErr *fs.PathError
	return !errors.As(err, &pathErr)
}

// certValidAt reports whether the leaf certificate of cert is valid at now.
func certValidAt(cert tls.Certificate, now time.Time) bool {
	leaf := cert.Leaf
	if leaf == nil {
		if len(cert.Certificate) == 0 {
			return false
		}
		var err error
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return false
		}
	}
	return !now.Before(leaf.NotBefore) && now.Before(leaf.NotAfter)
}

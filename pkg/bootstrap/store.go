package bootstrap

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minikubelet/minikubelet/pkg/atomicfile"
)

const (
	clientPrefix  = "kubelet-client"
	servingPrefix = "kubelet-server"
)

// store keeps certificates in certDir the way upstream's file store does (prefix kubelet-client for
// the client certificate, kubelet-server for a CSR-issued serving certificate):
//
//	kubelet-client-2026-11-21-23-59-01.pem   cert and key in one PEM file, 0600
//	kubelet-client-current.pem -> kubelet-client-2026-11-21-23-59-01.pem
//
// The kubeconfig points at the symlink, so a rotation is one atomic rename of the link.
type store struct{ certDir, prefix string }

func clientStore(certDir string) store { return store{certDir: certDir, prefix: clientPrefix} }

func (s store) currentPath() string { return filepath.Join(s.certDir, s.prefix+"-current.pem") }

// current loads the current certificate (checked against its key).
func (s store) current() (*x509.Certificate, error) {
	return loadLeaf(s.currentPath(), s.currentPath())
}

// loadLeaf loads a certificate and its key and returns the parsed certificate.
func loadLeaf(certFile, keyFile string) (*x509.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	if pair.Leaf != nil {
		return pair.Leaf, nil
	}
	return x509.ParseCertificate(pair.Certificate[0])
}

// leafOf parses a certificate and key given as PEM bytes and returns the certificate.
func leafOf(certPEM, keyPEM []byte) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(pair.Certificate[0])
}

// checkWritable makes sure certDir exists and new files can be created in it.
func (s store) checkWritable() error {
	if err := os.MkdirAll(s.certDir, 0o700); err != nil {
		return fmt.Errorf("create --cert-dir %s: %w (choose a writable directory)", s.certDir, err)
	}
	f, err := os.CreateTemp(s.certDir, ".probe")
	if err != nil {
		return fmt.Errorf("--cert-dir %s is not writable: %w (choose a writable directory)", s.certDir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// update writes a new cert+key file (0600, atomically) and points the current symlink at it.
func (s store) update(certPEM, keyPEM []byte, now time.Time) (string, error) {
	if err := os.MkdirAll(s.certDir, 0o700); err != nil {
		return "", fmt.Errorf("create --cert-dir %s: %w", s.certDir, err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return "", fmt.Errorf("the issued certificate does not match our key: %w", err)
	}
	name := fmt.Sprintf("%s-%s.pem", s.prefix, now.UTC().Format("2006-01-02-15-04-05"))
	path := filepath.Join(s.certDir, name)
	data := append(append([]byte{}, certPEM...), keyPEM...)
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w (is --cert-dir writable?)", path, err)
	}
	// Swap the symlink atomically: make a new link beside it, rename it over the old one.
	tmpLink := s.currentPath() + ".tmp"
	_ = os.Remove(tmpLink)
	if err := os.Symlink(name, tmpLink); err != nil {
		return "", err
	}
	if err := os.Rename(tmpLink, s.currentPath()); err != nil {
		return "", err
	}
	return path, nil
}

func encodePEM(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

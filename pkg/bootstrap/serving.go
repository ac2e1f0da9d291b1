package bootstrap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ServingConfig configures the serving certificate of the kubelet API when serverTLSBootstrap is
// on: instead of a self-signed certificate, the node asks the cluster's kubelet-serving signer
// for one (a CSR the node makes with its own identity), and rotates it like the client certificate.
// Upstream counterpart: pkg/kubelet/certificate/kubelet.go NewKubeletServerCertificateManager.
type ServingConfig struct {
	// Client talks as the node (its client certificate). Required.
	Client kubernetes.Interface
	// CertDir holds kubelet-server-<ts>.pem and the kubelet-server-current.pem link. Required.
	CertDir  string
	NodeName string   // Required.
	DNSNames []string // the node's hostnames, as SANs
	IPs      []net.IP // the node's addresses, as SANs
	// Timeout bounds the wait for an admin to approve one CSR; then a new CSR is made. Default 15 min.
	Timeout time.Duration
	// Clock times the rotation and tells whether a certificate on disk has expired; it defaults
	// to the real clock.
	Clock clock.Clock
}

// ServingCert keeps the kubelet API's serving certificate: GetCertificate for the TLS server, Run
// to request and rotate it.
type ServingCert struct {
	rotator *Rotator
	current atomic.Pointer[tls.Certificate]
}

// NewServingCert loads a still-valid serving certificate from an earlier run, if any.
func NewServingCert(cfg ServingConfig) (*ServingCert, error) {
	if cfg.Client == nil || cfg.CertDir == "" || cfg.NodeName == "" {
		return nil, errors.New("bootstrap: ServingConfig needs Client, CertDir and NodeName")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 15 * time.Minute
	}
	s := &ServingCert{}
	r, err := NewRotator(RotatorConfig{Client: cfg.Client, CertDir: cfg.CertDir, NodeName: cfg.NodeName, Timeout: cfg.Timeout, Clock: cfg.Clock,
		OnRotate: func() { _ = s.load() }})
	if err != nil {
		return nil, err
	}
	r.store, r.what, r.missingIsDue = store{certDir: cfg.CertDir, prefix: servingPrefix}, "serving", true
	// Subject and usages are what kcm's kubelet-serving signer accepts: the node's name, and only
	// DNS names and IPs as SANs.
	req := certRequest{
		template: &x509.CertificateRequest{Subject: nodeSubject(cfg.NodeName), DNSNames: cfg.DNSNames, IPAddresses: cfg.IPs},
		signer:   certificatesv1.KubeletServingSignerName,
		usages:   []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		who:      "the node's client certificate",
	}
	r.request = func(ctx context.Context) ([]byte, []byte, error) {
		return requestCert(ctx, cfg.Client, req, cfg.Timeout)
	}
	s.rotator = r
	_ = s.load() // none yet is fine: Run requests one
	return s, nil
}

// load reads the current certificate from disk into memory; an expired one is not served.
func (s *ServingCert) load() error {
	path := s.rotator.store.currentPath()
	pair, err := tls.LoadX509KeyPair(path, path)
	if err != nil {
		return err
	}
	if s.rotator.cfg.Clock.Now().After(pair.Leaf.NotAfter) {
		return fmt.Errorf("serving certificate %s expired at %s", path, pair.Leaf.NotAfter)
	}
	s.current.Store(&pair)
	return nil
}

// Run requests the certificate if there is none and rotates it before it expires, until ctx ends.
func (s *ServingCert) Run(ctx context.Context) {
	if s.current.Load() == nil {
		klog.FromContext(ctx).Info("The kubelet API has no serving certificate until its CSR is approved; TLS handshakes fail until then")
	}
	s.rotator.Run(ctx)
}

// GetCertificate is the TLS server's tls.Config.GetCertificate.
func (s *ServingCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.current.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("no serving certificate yet: the node's kubelet-serving CSR is waiting for approval (kubectl get csr; kubectl certificate approve <name>)")
}

// CurrentPath is the link to the current serving certificate (cert and key in one PEM file).
func (s *ServingCert) CurrentPath() string { return s.rotator.store.currentPath() }

package kubelet

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
)

// The API clients' transport (upstream: pkg/kubelet/certificate/transport.go UpdateTransport):
// the client certificate comes from a callback that hands out the current one, read again after
// each rotation, and every connection goes through one dialer so that a rotation can close them
// all. client-go would otherwise reload the certificate files itself, with five goroutines and
// a work queue per client — per node, with --nodes.

// clientCert is the node's current client certificate, loaded from its files when first asked
// for and again after reload.
type clientCert struct {
	certFile, keyFile string

	mu   sync.Mutex
	cert *tls.Certificate
}

// get is tls.Config.GetClientCertificate.
func (c *clientCert) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert == nil {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, fmt.Errorf("load the client certificate %s: %w", c.certFile, err)
		}
		c.cert = &cert
	}
	return c.cert, nil
}

// reload makes the next handshake read the files again (after a rotation wrote new ones).
func (c *clientCert) reload() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cert = nil
}

// clientTransport returns a copy of cfg (a kubeconfig with client certificate files) whose
// requests go through one transport: TLS verified with cfg's CA, the client certificate from
// cert, connections from dialer.
func clientTransport(cfg *rest.Config, cert *clientCert, dialer *connrotation.Dialer) (*rest.Config, error) {
	noCert := rest.CopyConfig(cfg)
	noCert.CertFile, noCert.KeyFile, noCert.CertData, noCert.KeyData = "", "", nil, nil
	tlsCfg, err := rest.TLSConfigFor(noCert) // the CA and server name
	if err != nil {
		return nil, fmt.Errorf("TLS configuration of the API client: %w", err)
	}
	if tlsCfg == nil || tlsCfg.RootCAs == nil {
		return nil, fmt.Errorf("the kubeconfig has no certificate-authority to verify the API server with")
	}
	tlsCfg.GetClientCertificate = cert.get
	out := rest.CopyConfig(noCert)
	out.TLSClientConfig = rest.TLSClientConfig{} // all in the transport now
	out.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 25,
		DialContext:         dialer.DialContext,
	})
	return out, nil
}

package kubelet

import (
	"crypto/tls"
	"fmt"
	"net"
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

// clientTransport is what the node's API clients connect with: its current client certificate,
// loaded from its files when first asked for and again after a rotation, and the dialer every
// connection goes through.
type clientTransport struct {
	certFile, keyFile string
	dialer            *connrotation.Dialer

	mu   sync.Mutex
	cert *tls.Certificate
}

// newClientTransport presents the certificate in certFile and keyFile.
func newClientTransport(certFile, keyFile string) *clientTransport {
	return &clientTransport{certFile: certFile, keyFile: keyFile,
		dialer: connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)}
}

// clientCertificate is tls.Config.GetClientCertificate.
func (c *clientTransport) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
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

// rotated is bootstrap.RotatorConfig.OnRotate: a rotation wrote new files. The next handshake
// reads them, and every open connection is closed so that the next requests make one (in this
// order: a connection made in between must not get the old certificate).
func (c *clientTransport) rotated() {
	c.mu.Lock()
	c.cert = nil
	c.mu.Unlock()
	c.dialer.CloseAll()
}

// config returns a copy of cfg (a kubeconfig with client certificate files) whose requests go
// through one transport: TLS verified with cfg's CA, the client certificate from
// clientCertificate, connections from the dialer.
func (c *clientTransport) config(cfg *rest.Config) (*rest.Config, error) {
	out := rest.CopyConfig(cfg)
	out.CertFile, out.KeyFile, out.CertData, out.KeyData = "", "", nil, nil
	tlsCfg, err := rest.TLSConfigFor(out) // the CA and server name
	if err != nil {
		return nil, fmt.Errorf("TLS configuration of the API client: %w", err)
	}
	if tlsCfg == nil || tlsCfg.RootCAs == nil {
		return nil, fmt.Errorf("the kubeconfig has no certificate-authority to verify the API server with")
	}
	tlsCfg.GetClientCertificate = c.clientCertificate
	out.TLSClientConfig = rest.TLSClientConfig{} // all in the transport now
	// client-go's own transport, but for the certificate and the dialer.
	out.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 25,
		DialContext:         c.dialer.DialContext,
	})
	return out, nil
}

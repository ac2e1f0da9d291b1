package prober

// The httpGet handler (upstream: pkg/probe/http/http.go and request.go, pkg/probe/util.go
// ResolveContainerPort, pkg/probe/dialer_others.go).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilio "k8s.io/utils/io"
)

// maxRedirects is how many redirects on the same host an HTTP probe follows, as net/http.
const maxRedirects = 10

// newHTTPTransport is the transport of all HTTP probes: a new connection per probe (no
// keep-alives), never a proxy, no Accept-Encoding, sockets that linger 1 s at most.
//
// HTTPS probes verify the pod's certificate against the node's trusted CAs. Here minikubelet
// differs from upstream on purpose: the real kubelet skips the verification ("the kubelet sends
// an HTTPS request skipping the certificate verification", say the docs), but this project never
// switches TLS verification off anywhere. A pod serving a certificate the node does not trust
// fails its HTTPS probe with the TLS error as the probe's output (README says so).
func newHTTPTransport() *http.Transport {
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig:    &tls.Config{MinVersion: tls.VersionTLS12}, // verified: see above
		DisableKeepAlives:  true,
		Proxy:              http.ProxyURL(nil),
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialProbe(ctx, network, addr, 0)
		},
	})
}

// httpProbe GETs req: a status in [200, 400) is a success with the body as output, a redirect
// to another host is not followed and gives a warning (an Event ProbeWarning), any other status
// is a failure "HTTP probe failed with statuscode: 503" (never the body: issue 99425), and an
// error (refused, timeout) is a failure with the error as output. At most 10 KiB of the body is
// read.
func httpProbe(transport http.RoundTripper, req *http.Request, timeout time.Duration) (outcome, string, error) {
	client := &http.Client{Timeout: timeout, Transport: transport, CheckRedirect: checkRedirect}
	res, err := client.Do(req)
	if err != nil {
		return outcomeFailure, err.Error(), nil // timeouts are failures, not errors
	}
	defer res.Body.Close()
	b, err := utilio.ReadAtMost(res.Body, maxOutput)
	if err != nil && !errors.Is(err, utilio.ErrLimitReached) {
		return outcomeFailure, "", err
	}
	body := string(b)
	switch {
	case res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusMultipleChoices:
		return outcomeSuccess, body, nil
	case res.StatusCode >= http.StatusMultipleChoices && res.StatusCode < http.StatusBadRequest:
		// Only a redirect checkRedirect stopped gets here.
		return outcomeWarning, "Probe terminated redirects, Response body: " + body, nil
	default:
		return outcomeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
	}
}

// checkRedirect follows redirects on the probed host only (upstream followNonLocalRedirects
// false): a redirect elsewhere ends the probe with the 3xx response itself.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// newHTTPRequest builds the GET of an httpGet probe: scheme (lowercased, default http), host
// (default the pod IP), port (a number or the name of a container port), path, and headers.
// User-Agent is kube-probe/<major.minor> and Accept */* unless the probe sets them; an empty
// Accept removes it; a Host header sets the request's host.
func newHTTPRequest(ctx context.Context, g *corev1.HTTPGetAction, c *corev1.Container, podIP string) (*http.Request, error) {
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := g.Host
	if host == "" {
		host = podIP
	}
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(g.Path)
	if err != nil {
		u = &url.URL{Path: g.Path} // a broken path is passed along, as upstream
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := http.Header{}
	for _, h := range g.HTTPHeaders {
		headers.Add(h.Name, h.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", userAgent)
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// userAgent is what HTTP and gRPC probes send: "kube-probe/<major>.<minor>" of the Kubernetes
// release whose modules go.mod pins (upstream builds it from component-base's version). A
// constant, because the module versions are not known to test binaries; TestUserAgentMatchesGoMod
// fails when go.mod moves to another minor.
const userAgent = "kube-probe/1.36"

// resolvePort turns a probe's port into a number: an int, the name of one of c's ports, or a
// number written as a string; it must be in 1..65535.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	port := -1
	switch p.Type {
	case intstr.Int:
		port = p.IntValue()
	case intstr.String:
		var found bool
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				port, found = int(cp.ContainerPort), true
				break
			}
		}
		if !found {
			n, err := strconv.Atoi(p.StrVal) // a number stored as a string
			if err != nil {
				return n, err
			}
			port = n
		}
	default:
		return port, fmt.Errorf("intOrString had no kind: %+v", p)
	}
	if port > 0 && port < 65536 {
		return port, nil
	}
	return port, fmt.Errorf("invalid port number: %v", port)
}

// dialProbe dials a probe's TCP connection and sets SO_LINGER to 1 s, so a closed probe socket
// does not sit in TIME-WAIT for a minute (issue 89898); timeout 0 means only ctx bounds it.
func dialProbe(ctx context.Context, network, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(1)
	}
	return conn, nil
}

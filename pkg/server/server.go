package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/exec"
)

const (
	// DefaultPort is the kubelet API port (KubeletConfiguration port).
	DefaultPort = 10250

	// Defaults of KubeletConfiguration authentication.webhook.cacheTTL and
	// authorization.webhook.cacheAuthorizedTTL / cacheUnauthorizedTTL.
	defaultAuthnCacheTTL        = 2 * time.Minute
	defaultAuthzAuthorizedTTL   = 5 * time.Minute
	defaultAuthzUnauthorizedTTL = 30 * time.Second

	// Timeouts of the upstream http.Server (ListenAndServeKubeletServer): long enough for
	// `kubectl logs -f` and exec sessions that run for hours.
	idleTimeout    = 90 * time.Second // matches http.DefaultTransport's keep-alive timeout
	readTimeout    = 4 * time.Hour
	writeTimeout   = 4 * time.Hour
	maxHeaderBytes = 1 << 20

	// shutdownGracePeriod bounds how long Run waits for in-flight requests after ctx is done.
	shutdownGracePeriod = 10 * time.Second
)

// Host is what the server needs from the kubelet.
type Host interface {
	// GetPods returns the pods this node runs (for /pods). It must not block; the server only
	// reads the returned pods.
	GetPods() []*corev1.Pod
	// ResolveContainer finds the running container's CRI ID (and its sandbox's) for
	// namespace/pod/container. podUID may be "" (only some URLs carry it); when set, it must
	// match. It must not block on the runtime for long. An error for which
	// apierrors.IsNotFound is true becomes 404.
	ResolveContainer(namespace, podName string, podUID types.UID, container string) (containerID, sandboxID string, err error)
	// ResolvePodSandbox finds the running sandbox's CRI ID of namespace/pod, like ResolveContainer.
	ResolvePodSandbox(namespace, podName string, podUID types.UID) (sandboxID string, err error)
	// ContainerLogs writes the logs of namespace/pod/container (its previous instance if
	// opts.Previous) to stdout and stderr. It blocks while opts.Follow until ctx is done or the
	// container stops. stdout and stderr may be the same writer. An error for which
	// apierrors.IsNotFound is true becomes 404 if nothing was written yet.
	ContainerLogs(ctx context.Context, namespace, podName, container string, opts *corev1.PodLogOptions, stdout, stderr io.Writer) error
}

// SummaryProvider gives the node's stats Summary (pkg/stats.Provider is one), as upstream's
// stats.SummaryProvider. Both methods may call the runtime; the caller must not modify what they
// return.
type SummaryProvider interface {
	// Summary is the whole Summary (/stats/summary).
	Summary(ctx context.Context) (*statsapi.Summary, error)
	// CPUAndMemoryStats is the Summary with only its CPU and memory figures
	// (?only_cpu_and_memory=true; upstream: GetCPUAndMemoryStats).
	CPUAndMemoryStats(ctx context.Context) (*statsapi.Summary, error)
}

// Streaming is the subset of runtimeapi.RuntimeServiceClient the server uses: what pkg/exec
// needs for exec, attach and port-forward (exec.Runtime: each call returns a one-time streaming
// URL quickly; the stream is proxied by pkg/exec), and ExecSync for /run.
type Streaming interface {
	exec.Runtime
	// ExecSync runs a command in a container to completion and blocks until it exits.
	ExecSync(ctx context.Context, in *runtimeapi.ExecSyncRequest, opts ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error)
}

// The CRI gRPC client (pkg/cri/remote, or runtimeapi.NewRuntimeServiceClient) is a Streaming.
var _ Streaming = runtimeapi.RuntimeServiceClient(nil)

// Config configures the kubelet API server. Zero values get the KubeletConfiguration defaults.
type Config struct {
	// Address is the IP to bind (default 0.0.0.0; tests use 127.0.0.1).
	Address string
	// Port defaults to 10250.
	Port int32
	// Profiling serves Go's /debug/pprof/ (config enableProfilingHandler, default true), behind
	// the same authentication and authorization as everything else (nodes/proxy).
	Profiling bool
	// Listener, when set, is served instead of listening on Address:Port; Port must be its port
	// (--nodes opens one on an ephemeral port for each node agent). Run closes it.
	Listener net.Listener

	// TLSCertFile and TLSKeyFile are the serving certificate (config tlsCertFile and
	// tlsPrivateKeyFile). Set both or neither. With neither, a self-signed certificate for
	// NodeName, Hostnames and NodeIPs is generated once into CertDir/kubelet.crt and
	// CertDir/kubelet.key, and reused while it is valid (upstream's default).
	TLSCertFile, TLSKeyFile string
	// CertDir (--cert-dir, <root-dir>/pki) holds the self-signed certificate. Required without
	// TLSCertFile.
	CertDir string

	// NodeName names the node: it is the name in every SubjectAccessReview and the self-signed
	// certificate's host. Required.
	NodeName string
	// Hostnames and NodeIPs are extra subject alternative names of the self-signed certificate.
	Hostnames []string
	NodeIPs   []net.IP
	// GetCertificate, if set, supplies the serving certificate for every handshake (serverTLSBootstrap:
	// a CSR-issued certificate that rotates); TLSCertFile and the self-signed pair are then unused.
	// It may fail until a certificate exists, failing those handshakes.
	GetCertificate     func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	GetCertificateFrom string // where GetCertificate's certificate lives, for the start-up log line

	// ClientCAFile (authentication.x509.clientCAFile) or ClientCAData verify client certificates;
	// the certificate's CN is the user and its O the groups. At most one of them. The file is
	// reloaded while Run runs.
	ClientCAFile string
	ClientCAData []byte
	// Anonymous lets requests without credentials through as system:anonymous (they are still
	// authorized); otherwise they get 401. Default false, as kubeadm configures it.
	Anonymous bool
	// WebhookAuthn checks bearer tokens with a TokenReview through Client.
	WebhookAuthn bool
	// AuthnCacheTTL caches TokenReview answers (default 2m).
	AuthnCacheTTL time.Duration

	// WebhookAuthz authorizes every request with a SubjectAccessReview through Client (mode
	// Webhook). Without it every authenticated request is allowed (mode AlwaysAllow).
	WebhookAuthz bool
	// AuthzAuthorizedTTL (default 5m) and AuthzUnauthorizedTTL (default 30s) cache
	// SubjectAccessReview answers.
	AuthzAuthorizedTTL, AuthzUnauthorizedTTL time.Duration

	// Client sends TokenReviews and SubjectAccessReviews. Required with WebhookAuthn or WebhookAuthz.
	Client kubernetes.Interface

	// Host and Streaming are the kubelet and the CRI runtime. Required.
	Host      Host
	Streaming Streaming

	// Metrics, if set, is served on /metrics; pass the kubelet's own registry, never a global one.
	Metrics prometheus.Gatherer
	// Stats, if set, serves /stats/summary (nodes/stats).
	Stats SummaryProvider
	// ResourceMetrics, if set, is served on /metrics/resource (nodes/metrics): the CPU and memory
	// figures metrics-server scrapes (pkg/stats.NewResourceMetricsRegistry).
	ResourceMetrics prometheus.Gatherer
	// Configz, if set, returns the running configuration, served on /configz as {"kubeletconfig": …}.
	Configz func() any
	// Journal, if set, is served on /debug/journal (JSON) and /debug/journal/ui (a page), both
	// authorized as nodes/proxy like upstream's other /debug paths.
	Journal *journal.Journal

	// Clock decides whether a self-signed certificate on disk is still valid (default: real clock).
	Clock clock.PassiveClock
}

// Server is the kubelet API on :10250. Create it with New; serve it with Run.
type Server struct {
	cfg Config
	// handler is the mux behind the authentication and authorization filter.
	handler http.Handler
	// exec serves /exec, /attach and /portForward once their target is resolved.
	exec *exec.Proxy
	// tlsConfig carries the serving certificate and asks for (but does not verify) client
	// certificates: the x509 authenticator verifies them.
	tlsConfig *tls.Config
	// servingCert says where the serving certificate came from, for the start-up log line.
	servingCert servingCertInfo
	// clientCAFile is non-nil when Config.ClientCAFile is set; Run reloads it.
	clientCAFile *dynamiccertificates.DynamicFileCAContent

	authn authenticator.Request
	authz authorizer.Authorizer
}

// New validates cfg, fills its defaults, builds the authenticator and authorizer, and loads
// (or generates) the serving certificate.
func New(cfg Config) (*Server, error) {
	if err := setDefaultsAndValidate(&cfg); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, exec: exec.NewProxy(cfg.Streaming)}

	var err error
	s.authn, s.clientCAFile, err = buildAuthn(cfg)
	if err != nil {
		return nil, err
	}
	s.authz, err = buildAuthz(cfg)
	if err != nil {
		return nil, err
	}

	s.tlsConfig = &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Request, do not require or verify: the x509 authenticator verifies the chain against
		// the (reloadable) client CA, and token or anonymous requests carry no certificate.
		ClientAuth: tls.RequestClientCert,
	}
	if cfg.GetCertificate != nil {
		s.tlsConfig.GetCertificate = cfg.GetCertificate
		s.servingCert = servingCertInfo{certFile: cfg.GetCertificateFrom}
	} else {
		cert, info, err := servingCertificate(cfg)
		if err != nil {
			return nil, err
		}
		s.servingCert = info
		s.tlsConfig.Certificates = []tls.Certificate{cert}
	}

	s.handler = s.withAuth(s.routes())
	return s, nil
}

func setDefaultsAndValidate(cfg *Config) error {
	if cfg.NodeName == "" {
		return errors.New("server: NodeName is required")
	}
	if cfg.Host == nil || cfg.Streaming == nil {
		return errors.New("server: Host and Streaming are required")
	}
	if cfg.Address == "" {
		cfg.Address = "0.0.0.0"
	}
	if net.ParseIP(cfg.Address) == nil {
		return fmt.Errorf("server: address %q is not an IP address; set it to an IP of this node, or 0.0.0.0 for all", cfg.Address)
	}
	if cfg.Port == 0 {
		cfg.Port = DefaultPort
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return fmt.Errorf("server: port %d is out of range 1-65535", cfg.Port)
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return errors.New("server: set both TLSCertFile and TLSKeyFile, or neither to use a self-signed certificate in CertDir")
	}
	if cfg.TLSCertFile == "" && cfg.CertDir == "" {
		return errors.New("server: CertDir is required to hold the self-signed serving certificate when TLSCertFile is not set")
	}
	if cfg.ClientCAFile != "" && len(cfg.ClientCAData) > 0 {
		return errors.New("server: set ClientCAFile or ClientCAData, not both")
	}
	if (cfg.WebhookAuthn || cfg.WebhookAuthz) && cfg.Client == nil {
		return errors.New("server: webhook authentication and authorization need a Client to send TokenReviews and SubjectAccessReviews")
	}
	if cfg.AuthnCacheTTL < 0 || cfg.AuthzAuthorizedTTL < 0 || cfg.AuthzUnauthorizedTTL < 0 {
		return errors.New("server: cache TTLs must not be negative")
	}
	if cfg.AuthnCacheTTL == 0 {
		cfg.AuthnCacheTTL = defaultAuthnCacheTTL
	}
	if cfg.AuthzAuthorizedTTL == 0 {
		cfg.AuthzAuthorizedTTL = defaultAuthzAuthorizedTTL
	}
	if cfg.AuthzUnauthorizedTTL == 0 {
		cfg.AuthzUnauthorizedTTL = defaultAuthzUnauthorizedTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return nil
}

// Run serves HTTPS on Config.Listener, or else on Address:Port, until ctx is done, then shuts
// down gracefully and returns nil. It returns an error if it cannot listen or serving fails.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.Listener != nil {
		return s.serve(ctx, s.cfg.Listener)
	}
	addr := net.JoinHostPort(s.cfg.Address, strconv.Itoa(int(s.cfg.Port)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s for the kubelet API: %w (is another kubelet running?)", addr, err)
	}
	return s.serve(ctx, ln)
}

// serve is Run on a listener the caller opened (tests use 127.0.0.1:0). It closes ln.
func (s *Server) serve(ctx context.Context, ln net.Listener) error {
	logger := klog.FromContext(ctx)
	if s.clientCAFile != nil {
		go s.clientCAFile.Run(ctx, 1)
	}
	srv := &http.Server{
		Handler:     s.handler,
		TLSConfig:   s.tlsConfig.Clone(),
		IdleTimeout: idleTimeout,
		ReadTimeout: readTimeout,
		// Headers come before authentication: do not let a silent client hold a connection.
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      writeTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// Requests inherit ctx: its logger, and its cancellation (a following log stream ends
		// when the kubelet stops, so Shutdown does not wait for it).
		BaseContext: func(net.Listener) context.Context { return ctx },
	}

	errCh := make(chan error, 1)
	go func() { errCh <- srv.ServeTLS(ln, "", "") }()
	logger.Info("Serving the kubelet API", "address", ln.Addr().String(),
		"servingCert", s.servingCert.certFile, "selfSigned", s.servingCert.selfSigned, "generated", s.servingCert.generated)

	select {
	case err := <-errCh:
		return fmt.Errorf("serve the kubelet API on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	logger.Info("Stopping the kubelet API server")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGracePeriod)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down the kubelet API server: %w", err)
	}
	if err := <-errCh; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the kubelet API on %s: %w", ln.Addr(), err)
	}
	return nil
}

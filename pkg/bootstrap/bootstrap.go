package bootstrap

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/atomicfile"
)

// Config says where the kubelet's credentials live and how to get new ones.
type Config struct {
	// Kubeconfig is the kubelet's kubeconfig (--kubeconfig). Required. Used as is when it holds a
	// valid, unexpired client certificate; otherwise bootstrap writes it.
	Kubeconfig string
	// BootstrapKubeconfig holds the API server, its CA and a bootstrap token (--bootstrap-kubeconfig).
	// Required only when Kubeconfig has no valid certificate.
	BootstrapKubeconfig string
	// CertDir is where kubelet-client-*.pem are kept (--cert-dir). Required.
	CertDir string
	// NodeName is the identity requested: CN system:node:<NodeName>, O system:nodes. Required.
	NodeName string
	// Timeout bounds the wait for the CSR to be approved and issued. Default 5 min.
	Timeout time.Duration
	// CertDuration, if set, is requested as the CSR's expirationSeconds.
	CertDuration time.Duration
	// Clock defaults to the real clock.
	Clock clock.Clock
}

func (c *Config) complete() error {
	if c.Kubeconfig == "" || c.CertDir == "" || c.NodeName == "" {
		return errors.New("bootstrap: Kubeconfig, CertDir and NodeName are required")
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	return nil
}

// LoadOrBootstrap returns a client config for the node's own identity. If the kubeconfig already
// holds a valid certificate it is reused (a restart makes no new CSR); otherwise it runs the TLS
// bootstrap: token → CSR → wait until issued → write cert, key and kubeconfig.
// Upstream counterpart: pkg/kubelet/certificate/bootstrap/bootstrap.go LoadClientCert.
func LoadOrBootstrap(ctx context.Context, cfg Config) (*rest.Config, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	st := clientStore(cfg.CertDir)

	restCfg, reason := loadValidKubeconfig(cfg.Kubeconfig, cfg.Clock.Now())
	if restCfg != nil && restCfg.CertFile == "" {
		return seedFromEmbedded(ctx, restCfg, st, cfg)
	}
	if restCfg != nil {
		logger.Info("Using the existing client certificate", "kubeconfig", cfg.Kubeconfig)
		return restCfg, nil
	}
	if cfg.BootstrapKubeconfig == "" {
		return nil, fmt.Errorf("--kubeconfig %s cannot be used (%s) and no --bootstrap-kubeconfig was given: pass a bootstrap kubeconfig with a token, e.g. _output/cluster/bootstrap.kubeconfig", cfg.Kubeconfig, reason)
	}
	logger.Info("Starting TLS bootstrap", "reason", reason, "bootstrapKubeconfig", cfg.BootstrapKubeconfig)
	// Fail before asking the cluster for anything if we could not keep what it gives us.
	if err := st.checkWritable(); err != nil {
		return nil, err
	}

	server, caData, bootstrapCfg, err := loadBootstrapKubeconfig(cfg.BootstrapKubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(bootstrapCfg)
	if err != nil {
		return nil, fmt.Errorf("--bootstrap-kubeconfig %s: %w", cfg.BootstrapKubeconfig, err)
	}
	certPEM, keyPEM, err := requestClientCert(ctx, client, cfg.NodeName, cfg.CertDuration, cfg.Timeout, "the bootstrap token in "+cfg.BootstrapKubeconfig)
	if err != nil {
		return nil, err
	}
	path, err := st.update(certPEM, keyPEM, cfg.Clock.Now())
	if err != nil {
		return nil, err
	}
	logger.Info("Wrote the node's client certificate", "path", path)
	if err := writeKubeconfig(cfg.Kubeconfig, server, caData, st.currentPath()); err != nil {
		return nil, err
	}
	logger.Info("Wrote the kubeconfig", "path", cfg.Kubeconfig)
	restCfg, reason = loadValidKubeconfig(cfg.Kubeconfig, cfg.Clock.Now())
	if restCfg == nil {
		return nil, fmt.Errorf("the kubeconfig just written is not usable: %s", reason)
	}
	return restCfg, nil
}

// loadValidKubeconfig returns the config if path is a kubeconfig whose client certificate exists,
// is valid now, and whose server is verified with a CA; otherwise nil and why not.
func loadValidKubeconfig(path string, now time.Time) (*rest.Config, string) {
	if _, err := os.Stat(path); err != nil {
		return nil, "it does not exist yet"
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Sprintf("it cannot be loaded: %v", err)
	}
	if restCfg.Insecure {
		return nil, "it disables TLS verification, which minikubelet never does"
	}
	if len(restCfg.CAData) == 0 && restCfg.CAFile == "" {
		return nil, "it has no certificate-authority"
	}
	certFile, keyFile := restCfg.CertFile, restCfg.KeyFile
	var cert *x509.Certificate
	switch {
	case certFile == "" && keyFile == "" && len(restCfg.CertData) > 0 && len(restCfg.KeyData) > 0:
		// Embedded client-certificate-data/client-key-data: kubeadm init's kubelet.conf.
		cert, err = leafOf(restCfg.CertData, restCfg.KeyData)
	case certFile == "" || keyFile == "":
		return nil, "it has no client-certificate/client-key (files or data)"
	default:
		cert, err = loadLeaf(certFile, keyFile)
	}
	if err != nil {
		return nil, fmt.Sprintf("its client certificate cannot be loaded: %v", err)
	}
	if now.After(cert.NotAfter) {
		return nil, fmt.Sprintf("its client certificate expired at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(cert.NotBefore) {
		return nil, fmt.Sprintf("its client certificate is not valid before %s", cert.NotBefore.UTC().Format(time.RFC3339))
	}
	return restCfg, ""
}

// seedFromEmbedded is upstream's answer to a kubeconfig whose valid client certificate is embedded
// (kubeadm init writes kubelet.conf so): the pair becomes the store's current certificate
// (kubelet-client-current.pem, which kubeadm's kubelet-finalize phase then points kubelet.conf at)
// and the node's clients use that file, so that rotation replaces it. Upstream
// (client-go util/certificate getCurrentCertificateOrBootstrap) also asks for a new certificate at
// once; here the rotator renews it on its usual schedule.
func seedFromEmbedded(ctx context.Context, restCfg *rest.Config, st store, cfg Config) (*rest.Config, error) {
	out := rest.CopyConfig(restCfg)
	if cur, err := st.current(); err == nil && cfg.Clock.Now().Before(cur.NotAfter) {
		// As upstream: a current certificate in the store (a restart after a rotation) wins.
		klog.FromContext(ctx).Info("Using the current client certificate of the certificate directory", "path", st.currentPath())
	} else {
		if err := st.checkWritable(); err != nil {
			return nil, err
		}
		path, err := st.update(restCfg.CertData, restCfg.KeyData, cfg.Clock.Now())
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: its embedded client certificate: %w", cfg.Kubeconfig, err)
		}
		klog.FromContext(ctx).Info("Using the client certificate embedded in the kubeconfig, written to the certificate directory",
			"kubeconfig", cfg.Kubeconfig, "path", path)
	}
	out.CertData, out.KeyData = nil, nil
	out.CertFile, out.KeyFile = st.currentPath(), st.currentPath()
	return out, nil
}

// loadBootstrapKubeconfig returns the server, the CA bytes and a client config from the bootstrap
// kubeconfig. It refuses a kubeconfig that has no CA or that skips TLS verification: trust comes
// from the CA in this file, never from skipping the check.
func loadBootstrapKubeconfig(path string) (string, []byte, *rest.Config, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s cannot be read: %w; give the path of a kubeconfig with a server, its CA and a bootstrap token", path, err)
	}
	restCfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return "", nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s is not a usable kubeconfig: %w", path, err)
	}
	if restCfg.Insecure {
		return "", nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s sets insecure-skip-tls-verify; minikubelet never skips TLS verification: put the cluster CA in certificate-authority-data", path)
	}
	caData := restCfg.CAData
	if len(caData) == 0 && restCfg.CAFile != "" {
		if caData, err = os.ReadFile(restCfg.CAFile); err != nil {
			return "", nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s: cannot read its certificate-authority %s: %w", path, restCfg.CAFile, err)
		}
	}
	if len(caData) == 0 {
		return "", nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s has no certificate-authority: add the cluster CA (certificate-authority-data) so the API server can be verified", path)
	}
	if restCfg.BearerToken == "" && restCfg.BearerTokenFile == "" && restCfg.CertFile == "" && len(restCfg.CertData) == 0 {
		return "", nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s has no credentials: add a bootstrap token (user token: <id>.<secret>)", path)
	}
	return restCfg.Host, caData, restCfg, nil
}

// certRequest is what one CSR asks for.
type certRequest struct {
	template *x509.CertificateRequest // subject and SANs
	signer   string
	usages   []certificatesv1.KeyUsage
	duration time.Duration // expirationSeconds; 0 leaves it to the signer
	who      string        // the credential making the request, for error messages
}

// requestClientCert asks for a node client certificate. Its subject and usages are exactly what
// kcm's csrapprover auto-approves for kubelet client certificates.
func requestClientCert(ctx context.Context, client kubernetes.Interface, nodeName string, duration, timeout time.Duration, who string) (certPEM, keyPEM []byte, err error) {
	return requestCert(ctx, client, certRequest{
		template: &x509.CertificateRequest{Subject: nodeSubject(nodeName)},
		signer:   certificatesv1.KubeAPIServerClientKubeletSignerName,
		usages:   []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		duration: duration,
		who:      who,
	}, timeout)
}

func nodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}
}

// requestCert generates a new ECDSA P-256 key, requests a certificate for it and waits until the
// CSR is issued.
func requestCert(ctx context.Context, client kubernetes.Interface, req certRequest, timeout time.Duration) (certPEM, keyPEM []byte, err error) {
	logger := klog.FromContext(ctx)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, req.template, key)
	if err != nil {
		return nil, nil, err
	}
	var requested *time.Duration
	if req.duration > 0 {
		requested = &req.duration
	}
	name, uid, err := csr.RequestCertificateWithContext(ctx, client, encodePEM("CERTIFICATE REQUEST", csrDER), "",
		req.signer, requested, req.usages, key)
	if err != nil {
		return nil, nil, explainCreateError(err, req.who)
	}
	if req.signer == certificatesv1.KubeletServingSignerName {
		// Nothing in Kubernetes approves serving certificates: a node could otherwise claim any
		// name or IP. An admin (or a controller they trust) must check the SANs and approve.
		logger.Info("Created a serving certificate signing request; it is NOT approved automatically. Check its names and IPs, then approve it: kubectl certificate approve "+name,
			"csr", name, "timeout", timeout)
	} else {
		logger.Info("Created a certificate signing request, waiting for it to be approved and issued", "csr", name, "timeout", timeout)
	}

	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	certPEM, err = csr.WaitForCertificate(waitCtx, client, name, uid)
	if err != nil {
		return nil, nil, explainWaitError(ctx, client, name, timeout, err)
	}
	logger.Info("Certificate signing request was issued", "csr", name)
	return certPEM, encodePEM("EC PRIVATE KEY", keyDER), nil
}

func explainCreateError(err error, who string) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server rejected %s (401 Unauthorized): the token is wrong or expired; create a new bootstrap token and kubeconfig", who)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s may not create certificate signing requests (403 Forbidden: %v): bind the ClusterRole system:node-bootstrapper to its group", who, err)
	default:
		return fmt.Errorf("create a certificate signing request with %s: %w (is the API server reachable?)", who, err)
	}
}

// explainWaitError says whether the CSR was denied, failed, or simply not approved in time.
func explainWaitError(ctx context.Context, client kubernetes.Interface, name string, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return ctx.Err() // we are shutting down
	}
	getCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	obj, getErr := client.CertificatesV1().CertificateSigningRequests().Get(getCtx, name, metav1.GetOptions{})
	if getErr == nil {
		for _, c := range obj.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateDenied:
				return fmt.Errorf("certificate signing request %s was DENIED (reason %q: %s): the cluster refused this node; ask an admin why, then restart to request again", name, c.Reason, c.Message)
			case certificatesv1.CertificateFailed:
				return fmt.Errorf("certificate signing request %s FAILED to be signed (reason %q: %s): check kube-controller-manager's --cluster-signing-* flags", name, c.Reason, c.Message)
			}
		}
		if len(obj.Status.Conditions) == 0 {
			return fmt.Errorf("certificate signing request %s was not approved within %s; approve it with: kubectl certificate approve %s", name, timeout, name)
		}
	}
	return fmt.Errorf("wait for certificate signing request %s to be issued: %w", name, err)
}

// writeKubeconfig writes a kubeconfig for the node: the server, the CA from the bootstrap
// kubeconfig (embedded), and the client cert/key pointing at the current symlink so rotations are
// picked up without rewriting it. Written 0600, atomically.
func writeKubeconfig(path, server string, caData []byte, certFile string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["default-cluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	cfg.AuthInfos["default-auth"] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: certFile}
	cfg.Contexts["default-context"] = &clientcmdapi.Context{Cluster: "default-cluster", AuthInfo: "default-auth"}
	cfg.CurrentContext = "default-context"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write --kubeconfig %s: %w", path, err)
	}
	return nil
}

package kubelet

import (
	"context"
	"fmt"
	"net"

	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/minikubelet/minikubelet/pkg/bootstrap"
	"github.com/minikubelet/minikubelet/pkg/server"
	"github.com/minikubelet/minikubelet/pkg/stats"
)

// The kubelet API's steps: its serving certificate and the HTTPS server on :10250 (upstream:
// pkg/kubelet/kubelet.go ListenAndServe, cmd/kubelet/app/server.go InitializeTLS and the serving
// certificate manager). What the server asks of the Kubelet is in kubelet_getters.go.

// startServingCertificate gets the kubelet API's certificate from a kubelet-serving CSR (approved
// by an admin) and rotates it, with serverTLSBootstrap; without it, the server signs its own.
func (k *Kubelet) startServingCertificate(context.Context) (component, error) {
	o := k.opts
	if !o.Config.ServerTLSBootstrap {
		return nop()
	}
	serving, err := bootstrap.NewServingCert(bootstrap.ServingConfig{
		Client: k.client, CertDir: o.CertDir, NodeName: o.NodeName, DNSNames: []string{o.NodeName}, IPs: []net.IP{k.nodeIP},
	})
	if err != nil {
		return nil, err
	}
	k.serving = serving
	return loop(serving.Run), nil
}

// startServer serves the kubelet API on --address:--port, authenticated (x509 against the
// cluster CA, bearer tokens by TokenReview) and authorized (SubjectAccessReview), as upstream. A
// server that cannot serve stops the kubelet.
func (k *Kubelet) startServer(ctx context.Context) (component, error) {
	o, cfg := k.opts, &k.opts.Config
	sc := server.Config{
		Address:              cfg.Address,
		Port:                 cfg.Port,
		Listener:             k.apiListener,
		Profiling:            *cfg.EnableProfilingHandler,
		CertDir:              o.CertDir,
		NodeName:             o.NodeName,
		Hostnames:            []string{o.NodeName},
		NodeIPs:              []net.IP{k.nodeIP},
		ClientCAFile:         cfg.Authentication.X509.ClientCAFile,
		ClientCAData:         clientCAData(cfg.Authentication.X509.ClientCAFile, k.restConfig.CAData, klog.FromContext(ctx)),
		Anonymous:            *cfg.Authentication.Anonymous.Enabled,
		WebhookAuthn:         *cfg.Authentication.Webhook.Enabled,
		AuthnCacheTTL:        cfg.Authentication.Webhook.CacheTTL.Duration,
		WebhookAuthz:         cfg.Authorization.Mode == kubeletconfig.KubeletAuthorizationModeWebhook,
		AuthzAuthorizedTTL:   cfg.Authorization.Webhook.CacheAuthorizedTTL.Duration,
		AuthzUnauthorizedTTL: cfg.Authorization.Webhook.CacheUnauthorizedTTL.Duration,
		Client:               k.client,
		Host:                 k,
		Streaming:            k.cri.Runtime,
		Metrics:              k.metrics,
		Stats:                k.stats,
		ResourceMetrics:      stats.NewResourceMetricsRegistry(k.stats.Summary, klog.FromContext(ctx)),
		Configz:              func() any { return cfg },
		Journal:              k.journal,
	}
	if k.serving != nil {
		sc.GetCertificate, sc.GetCertificateFrom = k.serving.GetCertificate, k.serving.CurrentPath()
	}
	srv, err := server.New(sc)
	if err != nil {
		return nil, err
	}
	return runFunc(func(ctx context.Context) error {
		if err := srv.Run(ctx); err != nil {
			return fmt.Errorf("kubelet API on :%d: %w (is another kubelet using the port? choose another with --port)", cfg.Port, err)
		}
		return nil
	}), nil
}

// clientCAData is the CA that verifies client certificates on the kubelet API when
// authentication.x509.clientCAFile is not set: the cluster CA from the kubeconfig (so the API
// server's kubelet-client certificate is accepted), said once in the log.
func clientCAData(clientCAFile string, kubeconfigCA []byte, logger klog.Logger) []byte {
	if clientCAFile != "" {
		return nil
	}
	logger.Info("The kubelet API trusts client certificates signed by the cluster CA from the kubeconfig; set authentication.x509.clientCAFile to choose another CA")
	return kubeconfigCA
}

package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/connrotation"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/minikubelet/minikubelet/pkg/bootstrap"
	"github.com/minikubelet/minikubelet/pkg/cri/fake"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/journal"
	"github.com/minikubelet/minikubelet/pkg/kubelet"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/lease"
	"github.com/minikubelet/minikubelet/pkg/metrics"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/secretmanager"
	"github.com/minikubelet/minikubelet/pkg/server"
	"github.com/minikubelet/minikubelet/pkg/version"
)

// run builds every component in the order of ARCHITECTURE.md and hands them to the Kubelet.
// It returns nil on a clean shutdown (ctx cancelled by SIGINT/SIGTERM).
func run(ctx context.Context, o *options.Options) error {
	if o.Nodes > 1 {
		return runNodes(ctx, o)
	}
	return runNode(ctx, o, nil)
}

// runNode runs one node agent. apiListener, when not nil, is where its kubelet API serves
// (--nodes opens one per node); nil listens on --address:--port.
func runNode(ctx context.Context, o *options.Options, apiListener net.Listener) error {
	logger := klog.FromContext(ctx)
	cfg := &o.Config
	logger.Info("Starting minikubelet", "version", version.Get().Version, "kubernetes", version.Get().Kubernetes, "node", o.NodeName)

	// 1. The root directory holds everything we write.
	if err := os.MkdirAll(o.RootDir, 0o750); err != nil {
		return fmt.Errorf("create --root-dir %s: %w (is it writable?)", o.RootDir, err)
	}

	// 2. TLS bootstrap: reuse the client certificate, or get one with the bootstrap token.
	restCfg, err := bootstrap.LoadOrBootstrap(ctx, bootstrap.Config{
		Kubeconfig:          o.Kubeconfig,
		BootstrapKubeconfig: o.BootstrapKubeconfig,
		CertDir:             o.CertDir,
		NodeName:            o.NodeName,
		Timeout:             o.BootstrapTimeout,
		CertDuration:        o.ClientCertDuration,
	})
	if err != nil {
		return err
	}

	// 3. Clients. Every connection goes through one dialer, so a certificate rotation can close
	// them all and the next requests handshake with the new certificate.
	dialer := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	client, heartbeatClient, err := newClients(restCfg, dialer, cfg.NodeStatusUpdateFrequency.Duration,
		time.Duration(cfg.NodeLeaseDurationSeconds)*time.Second, float32(*cfg.KubeAPIQPS), int(cfg.KubeAPIBurst))
	if err != nil {
		return err
	}

	// 4. Events, as the kubelet records them: to core/v1 Events, source "kubelet" on this host.
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: o.NodeName})

	// 5. Client certificate rotation (rotateCertificates).
	var rotator *bootstrap.Rotator
	if cfg.RotateCertificates {
		rotator, err = bootstrap.NewRotator(bootstrap.RotatorConfig{
			Client: client, CertDir: o.CertDir, NodeName: o.NodeName,
			CertDuration: o.ClientCertDuration, Timeout: o.BootstrapTimeout,
			OnRotate: dialer.CloseAll,
		})
		if err != nil {
			return err
		}
	}

	// 6. The container runtime, over CRI gRPC: the built-in fake runtime (served in-process on
	// <root-dir>/fake-runtime.sock) unless --container-runtime-endpoint names one.
	endpoint := o.ContainerRuntimeEndpoint
	if endpoint == "" {
		stopFake, ep, err := startFakeRuntime(ctx, filepath.Join(o.RootDir, "fake-runtime.sock"), cfg.PodCIDR)
		if err != nil {
			return err
		}
		defer stopFake()
		endpoint = ep
	}
	cri, err := remote.Dial(ctx, endpoint, cfg.RuntimeRequestTimeout.Duration)
	if err != nil {
		return err
	}
	defer func() { _ = cri.Close() }()

	// Metrics, served on :10250/metrics; components observe into it through hooks.
	metricsRegistry := metrics.New()
	// The journal ("what just happened?"): components record what they do into it; it is served
	// on :10250/debug/journal and, with --debug-address, on a loopback listener without auth.
	eventJournal := journal.New(journal.DefaultSize)
	if o.DebugAddress != "" {
		stopDebug, err := startDebugServer(ctx, o.DebugAddress, eventJournal)
		if err != nil {
			return err
		}
		defer stopDebug()
	}

	// 7. Node registration and status; the node is Ready only while the runtime is.
	nodeIP := net.ParseIP(o.NodeIP)
	if nodeIP == nil {
		if nodeIP, err = nodestatus.DetectNodeIP(o.NodeName); err != nil {
			return err
		}
	}
	status, err := nodestatus.New(nodestatus.Config{
		Client:            client,
		HeartbeatClient:   heartbeatClient,
		NodeName:          o.NodeName,
		NodeIP:            nodeIP,
		Labels:            o.NodeLabels,
		Taints:            o.Taints,
		Machine:           nodestatus.ReadMachine(o.RootDir),
		CapacityOverrides: o.Capacity,
		MaxPods:           cfg.MaxPods,
		KubeletVersion:    version.Get().Kubernetes,
		KubeletPort:       cfg.Port,
		UpdateFrequency:   cfg.NodeStatusUpdateFrequency.Duration,
		ReportFrequency:   cfg.NodeStatusReportFrequency.Duration,
		Recorder:          recorder,
	})
	if err != nil {
		return err
	}
	status.AddReadinessCheck(kubelet.RuntimeReadinessCheck(cri.Runtime, 5*time.Second))
	status.SetRuntimeVersion(func() string {
		return cri.Version().GetRuntimeName() + "://" + cri.Version().GetRuntimeVersion()
	})

	// 8. Lease heartbeat.
	heartbeat, err := lease.New(lease.Config{
		Client:   heartbeatClient,
		NodeName: o.NodeName,
		Duration: time.Duration(cfg.NodeLeaseDurationSeconds) * time.Second,
		OnRenew:  metricsRegistry.ObserveLeaseRenew,
		Journal:  eventJournal,
	})
	if err != nil {
		return err
	}
	if o.DebugKeepalive {
		if err := startLeaseKeeper(ctx, o.Kubeconfig, o.NodeName, time.Duration(cfg.NodeLeaseDurationSeconds)*time.Second); err != nil {
			return err
		}
	}

	// 9. Secret and ConfigMap managers (configMapAndSecretChangeDetectionStrategy: Get, Cache or Watch).
	secrets, err := secretmanager.New(secretmanager.Config{
		Client:   client,
		Strategy: secretmanager.Strategy(cfg.ConfigMapAndSecretChangeDetectionStrategy),
		Resync:   cfg.SyncFrequency.Duration,
		Metrics:  metricsRegistry.CountObjectRequest,
		Journal:  eventJournal,
	})
	if err != nil {
		return err
	}

	// 10. Pods: kuberuntime turns pod specs into CRI calls; the Kubelet builds the pod lifecycle on it.
	runtimeManager, err := kuberuntime.New(kuberuntime.Config{Runtime: cri.Runtime, Image: cri.Image, PodLogsDir: cfg.PodLogsDir, Journal: eventJournal})
	if err != nil {
		return err
	}
	// 11. The kubelet API on --address:--port, authenticated (x509 against the cluster CA,
	// bearer tokens by TokenReview) and authorized (SubjectAccessReview), as upstream. With
	// serverTLSBootstrap its certificate comes from a kubelet-serving CSR (approved by an admin)
	// instead of being self-signed, and rotates.
	var serving *bootstrap.ServingCert
	if cfg.ServerTLSBootstrap {
		serving, err = bootstrap.NewServingCert(bootstrap.ServingConfig{
			Client: client, CertDir: o.CertDir, NodeName: o.NodeName, DNSNames: []string{o.NodeName}, IPs: []net.IP{nodeIP},
		})
		if err != nil {
			return err
		}
	}
	serverCfg := &server.Config{
		Address:              cfg.Address,
		Port:                 cfg.Port,
		Listener:             apiListener,
		Profiling:            *cfg.EnableProfilingHandler,
		CertDir:              o.CertDir,
		NodeName:             o.NodeName,
		Hostnames:            []string{o.NodeName},
		NodeIPs:              []net.IP{nodeIP},
		ClientCAFile:         cfg.Authentication.X509.ClientCAFile,
		ClientCAData:         clientCAData(cfg.Authentication.X509.ClientCAFile, restCfg.CAData, logger),
		Anonymous:            *cfg.Authentication.Anonymous.Enabled,
		WebhookAuthn:         *cfg.Authentication.Webhook.Enabled,
		AuthnCacheTTL:        cfg.Authentication.Webhook.CacheTTL.Duration,
		WebhookAuthz:         cfg.Authorization.Mode == kubeletconfig.KubeletAuthorizationModeWebhook,
		AuthzAuthorizedTTL:   cfg.Authorization.Webhook.CacheAuthorizedTTL.Duration,
		AuthzUnauthorizedTTL: cfg.Authorization.Webhook.CacheUnauthorizedTTL.Duration,
		Client:               client,
		Streaming:            cri.Runtime,
		Metrics:              metricsRegistry,
		Configz:              func() any { return cfg },
		Journal:              eventJournal,
	}
	if serving != nil {
		serverCfg.GetCertificate, serverCfg.GetCertificateFrom = serving.GetCertificate, serving.CurrentPath()
		go serving.Run(ctx)
	}
	k, err := kubelet.New(kubelet.Config{
		NodeStatus: status, Lease: heartbeat, Rotator: rotator, Recorder: recorder, NodeRef: status.NodeRef(),
		Pods: &kubelet.PodConfig{
			Client:             client,
			NodeName:           o.NodeName,
			NodeIP:             nodeIP.String(),
			Runtime:            runtimeManager,
			RuntimeName:        cri.Version().GetRuntimeName(),
			ManifestDir:        cfg.StaticPodPath,
			MaxPods:            int(cfg.MaxPods),
			RootDir:            o.RootDir,
			PodLogsDir:         cfg.PodLogsDir,
			Secrets:            secrets,
			SyncFrequency:      cfg.SyncFrequency.Duration,
			FileCheckFrequency: cfg.FileCheckFrequency.Duration,
			ServerPort:         cfg.Port,
			Metrics:            metricsRegistry,
			Journal:            eventJournal,
		},
		Server: serverCfg,
	})
	if err != nil {
		return err
	}
	return k.Run(ctx)
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

// startFakeRuntime serves the fake CRI runtime on socket, with pod IPs from podCIDR ("" = its
// default), until ctx ends; stop waits for it.
func startFakeRuntime(ctx context.Context, socket, podCIDR string) (stop func(), endpoint string, err error) {
	rt, err := fake.New(fake.Config{Socket: socket, PodCIDR: podCIDR})
	if err != nil {
		return nil, "", fmt.Errorf("start the built-in fake runtime: %w", err)
	}
	logger := klog.FromContext(ctx).WithName("fake-runtime")
	served := make(chan error, 1)
	go func() { served <- rt.Serve(klog.NewContext(ctx, logger)) }()
	select {
	case <-rt.Ready():
	case err := <-served:
		return nil, "", fmt.Errorf("serve the built-in fake runtime on %s: %w", socket, err)
	}
	logger.Info("Serving the built-in fake CRI runtime", "endpoint", rt.Endpoint())
	return func() {
		if err := <-served; err != nil {
			logger.Error(err, "The fake runtime stopped with an error")
		}
	}, rt.Endpoint(), nil
}

// startDebugServer serves the journal without authentication on the loopback --debug-address
// until ctx ends; stop ends it and waits for it.
func startDebugServer(ctx context.Context, addr string, j *journal.Journal) (stop func(), err error) {
	debug, err := journal.ListenDebug(addr, j)
	if err != nil {
		return nil, err // it names the address and the flag
	}
	logger := klog.FromContext(ctx).WithName("debug")
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	served := make(chan error, 1)
	go func() { served <- debug.Serve(ctx) }()
	return func() {
		cancel()
		if err := <-served; err != nil {
			logger.Error(err, "The debug listener stopped with an error")
		}
	}, nil
}

// newClients returns the main client (rate-limited by kubeAPIQPS/Burst) and the heartbeat client
// (no client-side rate limit, and a timeout no longer than the lease, as upstream), both dialing
// through dialer.
func newClients(base *rest.Config, dialer *connrotation.Dialer, statusFrequency, leaseDuration time.Duration, qps float32, burst int) (kubernetes.Interface, kubernetes.Interface, error) {
	mainCfg := rest.CopyConfig(base)
	mainCfg.Dial = dialer.DialContext
	mainCfg.QPS, mainCfg.Burst = qps, burst
	mainCfg.UserAgent = "minikubelet/" + version.Get().Version
	mainCfg.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(mainCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create API client: %w", err)
	}
	hbCfg := rest.CopyConfig(mainCfg)
	hbCfg.Timeout = min(statusFrequency, leaseDuration)
	hbCfg.QPS = -1 // never wait on a client-side rate limiter
	heartbeat, err := kubernetes.NewForConfig(hbCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create heartbeat client: %w", err)
	}
	return client, heartbeat, nil
}

package kubelet

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/bootstrap"
	"github.com/minikubelet/minikubelet/pkg/lease"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
	"github.com/minikubelet/minikubelet/pkg/version"
)

// The node's steps: its identity (client certificate), its API clients, its Events, the Node
// object, its Lease and its status.

// makeRootDir creates --root-dir, which holds everything the kubelet writes.
func (k *Kubelet) makeRootDir(context.Context) (component, error) {
	if err := os.MkdirAll(k.opts.RootDir, 0o750); err != nil {
		return nil, fmt.Errorf("create --root-dir %s: %w (is it writable?)", k.opts.RootDir, err)
	}
	return nil, nil
}

// bootstrapClientCert is TLS bootstrap: reuse the client certificate in --kubeconfig, or get one
// with the bootstrap token (CSR → approval → certificate).
func (k *Kubelet) bootstrapClientCert(ctx context.Context) (component, error) {
	o := k.opts
	turn, err := k.shared.waitTurn(ctx) // --nodes: a few at a time, until registered
	if err != nil {
		return nil, err
	}
	k.turn = turn
	restCfg, err := bootstrap.LoadOrBootstrap(ctx, bootstrap.Config{
		Kubeconfig:          o.Kubeconfig,
		BootstrapKubeconfig: o.BootstrapKubeconfig,
		CertDir:             o.CertDir,
		NodeName:            o.NodeName,
		Timeout:             o.BootstrapTimeout,
		CertDuration:        o.ClientCertDuration,
	})
	k.restConfig = restCfg
	if err == nil {
		k.shared.countBootstrapped()
	}
	return nil, err
}

// makeClients makes the main client (rate-limited by kubeAPIQPS/Burst), the heartbeat client
// (no client-side rate limit, and a timeout no longer than the lease, as upstream) and the
// event client (rate-limited by eventRecordQPS/eventBurst), over one
// transport (transport.go). Every connection goes through one dialer, so a certificate rotation
// can close them all and the next requests handshake with the new certificate.
func (k *Kubelet) makeClients(context.Context) (component, error) {
	cfg := &k.opts.Config
	k.transport = newClientTransport(k.restConfig.CertFile, k.restConfig.KeyFile)
	mainCfg, err := k.transport.config(k.restConfig) // transport.go
	if err != nil {
		return nil, err
	}
	mainCfg.QPS, mainCfg.Burst = float32(*cfg.KubeAPIQPS), int(cfg.KubeAPIBurst)
	mainCfg.UserAgent = "minikubelet/" + version.Get().Version
	mainCfg.ContentType = "application/vnd.kubernetes.protobuf"
	httpClient, err := rest.HTTPClientFor(mainCfg)
	if err != nil {
		return nil, fmt.Errorf("create API client: %w", err)
	}
	client, err := kubernetes.NewForConfigAndClient(mainCfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create API client: %w", err)
	}
	hbCfg := rest.CopyConfig(mainCfg)
	hbCfg.Timeout = min(cfg.NodeStatusUpdateFrequency.Duration, k.leaseDuration())
	hbCfg.QPS = -1 // never wait on a client-side rate limiter
	// One transport, so one connection, for both, as upstream (its heartbeat client config is a
	// copy of the main one, transport included); the heartbeat's own timeout is its http.Client's.
	heartbeat, err := kubernetes.NewForConfigAndClient(hbCfg, &http.Client{Transport: httpClient.Transport, Timeout: hbCfg.Timeout})
	if err != nil {
		return nil, fmt.Errorf("create heartbeat client: %w", err)
	}
	// Events: their own rate limit (eventRecordQPS, eventBurst) over the same connection, as
	// upstream's separate event client.
	evCfg := rest.CopyConfig(mainCfg)
	evCfg.QPS, evCfg.Burst = float32(*cfg.EventRecordQPS), int(cfg.EventBurst)
	events, err := typedcorev1.NewForConfigAndClient(evCfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("create event client: %w", err)
	}
	k.client, k.heartbeatClient, k.eventClient = client, heartbeat, events
	return nil, nil
}

// startEvents records Events as the kubelet does: core/v1 Events, source component "kubelet" on
// this host. Stopping it (after every step that records) flushes what is queued.
func (k *Kubelet) startEvents(ctx context.Context) (component, error) {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: k.eventClient.Events("")})
	k.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: k.opts.NodeName})
	return onStop(func() error { broadcaster.Shutdown(); return nil }), nil
}

// startCertRotation renews the client certificate before it expires (rotateCertificates), then
// closes every connection so the next requests use the new one.
func (k *Kubelet) startCertRotation(context.Context) (component, error) {
	o := k.opts
	if !o.Config.RotateCertificates {
		return nop()
	}
	rotator, err := bootstrap.NewRotator(bootstrap.RotatorConfig{
		Client: k.client, CertDir: o.CertDir, NodeName: o.NodeName,
		CertDuration: o.ClientCertDuration, Timeout: o.BootstrapTimeout,
		OnRotate: k.transport.rotated,
	})
	if err != nil {
		return nil, err
	}
	return loop(rotator.Run), nil
}

// makeNodeStatus makes the node's status (sent once the Node is registered): the node is Ready
// only while the runtime and PLEG are healthy.
func (k *Kubelet) makeNodeStatus(context.Context) (component, error) {
	o, cfg := k.opts, &k.opts.Config
	status, err := nodestatus.New(nodestatus.Config{
		Client:            k.client,
		HeartbeatClient:   k.heartbeatClient,
		NodeName:          o.NodeName,
		NodeIP:            k.nodeIP,
		Labels:            o.NodeLabels,
		Taints:            o.Taints,
		Machine:           k.machine,
		CapacityOverrides: o.Capacity,
		MaxPods:           cfg.MaxPods,
		Reserved:          o.NodeReserved,
		KubeletVersion:    version.Get().Kubernetes,
		KubeletPort:       cfg.Port,
		UpdateFrequency:   cfg.NodeStatusUpdateFrequency.Duration,
		ReportFrequency:   cfg.NodeStatusReportFrequency.Duration,
		Recorder:          k.recorder,
	})
	if err != nil {
		return nil, err
	}
	status.AddReadinessCheck(RuntimeReadinessCheck(k.cri.Runtime, 5*time.Second))
	status.SetRuntimeVersion(func() string {
		return k.cri.Version().GetRuntimeName() + "://" + k.cri.Version().GetRuntimeVersion()
	})
	// upstream: "PLEG is not healthy: pleg was last seen active …"
	status.AddReadinessCheck(nodestatus.ReadinessCheck{Name: "PLEG", Check: func() error {
		_, err := k.pleg.Healthy()
		return err
	}})
	k.status = status
	k.recorder.Eventf(status.NodeRef(), corev1.EventTypeNormal, "Starting", "Starting minikubelet.")
	return nil, nil
}

// registerNode creates the Node (or takes over the existing one), retrying until it exists: its
// Lease (owner reference) and status need it. It runs after the syncloop,
// as upstream registers from its node status loop while the pods already run: a static pod may
// be the API server it registers with (kubeadm's control plane).
func (k *Kubelet) registerNode(ctx context.Context) (component, error) {
	if err := k.status.Register(ctx); err != nil {
		return nil, err
	}
	k.shared.countRegistered()
	k.turn.done()
	return nil, nil
}

// startLease renews the node's Lease in kube-node-lease every nodeLeaseDurationSeconds/4.
func (k *Kubelet) startLease(context.Context) (component, error) {
	heartbeat, err := lease.New(lease.Config{
		Client:   k.heartbeatClient,
		NodeName: k.opts.NodeName,
		Duration: k.leaseDuration(),
		OnRenew:  k.metrics.ObserveLeaseRenew,
		Journal:  k.journal.For(journal.SourceLease),
	})
	if err != nil {
		return nil, err
	}
	return loop(heartbeat.Run), nil
}

// startNodeStatus computes the node's status every nodeStatusUpdateFrequency and reports it on
// change or every nodeStatusReportFrequency.
func (k *Kubelet) startNodeStatus(context.Context) (component, error) {
	return loop(k.status.Run), nil
}

func (k *Kubelet) leaseDuration() time.Duration {
	return time.Duration(k.opts.Config.NodeLeaseDurationSeconds) * time.Second
}

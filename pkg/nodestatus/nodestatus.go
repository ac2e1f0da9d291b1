package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// ReadinessCheck is one reason the node may not be Ready, e.g. "container runtime" or "PLEG". It
// returns nil when healthy, or an error whose text becomes part of the Ready condition's message.
// It must not block for long: it runs on every status update.
type ReadinessCheck struct {
	Name  string
	Check func() error
}

// Config configures node registration and status reporting.
type Config struct {
	// Client registers and reconciles the Node (main client). Required.
	Client kubernetes.Interface
	// HeartbeatClient PATCHes the status (its own timeout, no rate limit). Defaults to Client.
	HeartbeatClient kubernetes.Interface
	// NodeName is the Node's name. Required.
	NodeName string
	// Hostname is reported as the Hostname address. Defaults to NodeName.
	Hostname string
	// NodeIP is the InternalIP. Required (see DetectNodeIP).
	NodeIP net.IP
	// Labels are added to the well-known ones (hostname, os, arch) at registration.
	Labels map[string]string
	// Taints are set at registration only (as upstream --register-with-taints).
	Taints []corev1.Taint
	// Machine is the host's size and identity (ReadMachine); CapacityOverrides replace parts of it.
	Machine           Machine
	CapacityOverrides corev1.ResourceList
	// MaxPods is the "pods" capacity.
	MaxPods int32
	// Reserved is kept from the pods' allocatable: kubeReserved, systemReserved, evictionHard
	// (options.Options.NodeReserved). New fails when it is larger than the capacity.
	Reserved cm.NodeConfig
	// KubeletVersion is reported in nodeInfo (the Kubernetes version we are built against).
	KubeletVersion string
	// KubeletPort is published in status.daemonEndpoints so the API server finds the kubelet API.
	KubeletPort int32
	// UpdateFrequency is how often the status is computed (nodeStatusUpdateFrequency, 10 s);
	// ReportFrequency how often it is PATCHed when unchanged (nodeStatusReportFrequency, 5 min).
	UpdateFrequency time.Duration
	ReportFrequency time.Duration
	// Recorder records node events. Required.
	Recorder record.EventRecorder
	// Clock defaults to the real clock.
	Clock clock.WithTicker
}

// Manager registers the Node and keeps its status current.
type Manager struct {
	cfg     Config
	nodeRef *corev1.ObjectReference

	// capacity and allocatable are computed once, in New (NodeResources).
	capacity, allocatable corev1.ResourceList

	mu             sync.Mutex
	checks         []ReadinessCheck
	runtimeVersion func() string
	pressure       func(corev1.NodeConditionType) bool // nil: no pressure

	// watch is the informer on our own Node; the status loop reads the Node from it.
	watch *nodeWatch

	// Owned by the status loop.
	lastReport time.Time
	// readFromAPI is set when the last turn failed: the next one GETs the Node, as upstream's
	// retries do, rather than trust the watch cache.
	readFromAPI bool
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil || cfg.NodeName == "" || cfg.NodeIP == nil || cfg.Recorder == nil {
		return nil, errors.New("nodestatus: Client, NodeName, NodeIP and Recorder are required")
	}
	if cfg.HeartbeatClient == nil {
		cfg.HeartbeatClient = cfg.Client
	}
	if cfg.Hostname == "" {
		cfg.Hostname = cfg.NodeName
	}
	if cfg.UpdateFrequency == 0 {
		cfg.UpdateFrequency = 10 * time.Second
	}
	if cfg.ReportFrequency == 0 {
		cfg.ReportFrequency = 5 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	capacity, allocatable, err := NodeResources(cfg.Machine, cfg.CapacityOverrides, cfg.MaxPods, cfg.Reserved)
	if err != nil {
		return nil, err
	}
	// Events about a Node use the node name as UID, as upstream does.
	ref := &corev1.ObjectReference{Kind: "Node", Name: cfg.NodeName, UID: types.UID(cfg.NodeName)}
	return &Manager{cfg: cfg, nodeRef: ref, capacity: capacity, allocatable: allocatable, runtimeVersion: func() string { return "" },
		watch: newNodeWatch(cfg.Client, cfg.NodeName)}, nil
}

// NodeRef is the reference to use when recording events about this node.
func (m *Manager) NodeRef() *corev1.ObjectReference { return m.nodeRef }

// AddReadinessCheck adds a check that must pass for the node to be Ready (the runtime and PLEG
// add theirs). Safe to call while Run is running.
func (m *Manager) AddReadinessCheck(c ReadinessCheck) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checks = append(m.checks, c)
}

// SetRuntimeVersion sets where nodeInfo.containerRuntimeVersion comes from (e.g. CRI Version).
func (m *Manager) SetRuntimeVersion(f func() string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runtimeVersion = f
}

// SetPressure sets where the MemoryPressure, DiskPressure and PIDPressure conditions come from:
// the eviction manager's IsUnder. Until it is set they are False. f must not block.
func (m *Manager) SetPressure(f func(corev1.NodeConditionType) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pressure = f
}

func (m *Manager) inputs() statusInputs {
	m.mu.Lock()
	checks := append([]ReadinessCheck(nil), m.checks...)
	runtimeVersion, isUnder := m.runtimeVersion, m.pressure
	m.mu.Unlock()
	pressure := map[corev1.NodeConditionType]bool{}
	for _, p := range pressureConditions {
		pressure[p.typ] = isUnder != nil && isUnder(p.typ)
	}
	var notReady []string
	for _, c := range checks {
		if err := c.Check(); err != nil {
			notReady = append(notReady, fmt.Sprintf("%s: %v", c.Name, err))
		}
	}
	machine := m.cfg.Machine
	machine.Capacity = m.capacity
	return statusInputs{
		machine:     machine,
		allocatable: m.allocatable,
		addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: m.cfg.NodeIP.String()},
			{Type: corev1.NodeHostName, Address: m.cfg.Hostname},
		},
		kubeletVersion: m.cfg.KubeletVersion,
		runtimeVersion: runtimeVersion(),
		kubeletPort:    m.cfg.KubeletPort,
		notReady:       notReady,
		pressure:       pressure,
		now:            m.cfg.Clock.Now(),
	}
}

// labels are the labels the kubelet owns on its Node.
func (m *Manager) labels() map[string]string {
	l := map[string]string{
		corev1.LabelHostname:   m.cfg.Hostname,
		corev1.LabelOSStable:   m.cfg.Machine.Info.OperatingSystem,
		corev1.LabelArchStable: m.cfg.Machine.Info.Architecture,
	}
	for k, v := range m.cfg.Labels {
		l[k] = v
	}
	return l
}

// Register creates the Node, or reconciles it if it already exists (labels we own), retrying with
// backoff until it succeeds or ctx ends: a kubelet keeps trying while the API server is away.
// Upstream counterpart: kubelet_node_status.go registerWithAPIServer / tryRegisterWithAPIServer.
func (m *Manager) Register(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	backoff := 100 * time.Millisecond
	for {
		err := m.tryRegister(ctx)
		if err == nil {
			return nil
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			// Retrying cannot fix what the API server refuses on principle; say so and stop.
			return fmt.Errorf("register node %q: %w", m.cfg.NodeName, err)
		}
		logger.Error(err, "Unable to register the node; retrying", "node", m.cfg.NodeName, "retryIn", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.cfg.Clock.After(backoff):
		}
		backoff = min(backoff*2, 7*time.Second)
	}
}

func (m *Manager) tryRegister(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   m.cfg.NodeName,
			Labels: m.labels(),
			// Volumes are attached by the attach/detach controller, as with any modern kubelet.
			Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"},
		},
		Spec: corev1.NodeSpec{Taints: m.cfg.Taints},
	}
	node.Status = computeStatus(corev1.NodeStatus{}, m.inputs())
	created, err := m.cfg.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		logger.Info("Registered the node", "node", klog.KObj(created))
		m.recordConditionEvents(corev1.NodeStatus{}, created.Status)
		m.lastReport = m.cfg.Clock.Now()
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if changed := reconcileLabels(existing, m.labels()); changed {
		if existing, err = m.cfg.Client.CoreV1().Nodes().Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	logger.Info("The node was already registered; reconciled it", "node", klog.KObj(existing))
	return nil
}

// reconcileLabels sets the labels we own on an existing node; it reports whether any changed.
func reconcileLabels(node *corev1.Node, want map[string]string) bool {
	changed := false
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range want {
		if node.Labels[k] != v {
			node.Labels[k] = v
			changed = true
		}
	}
	return changed
}

// Run watches the Node, computes the status every UpdateFrequency and reports it when needed,
// until ctx ends. Register must have succeeded first.
func (m *Manager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { m.watch.run(ctx) })
	ticker := m.cfg.Clock.NewTicker(m.cfg.UpdateFrequency)
	defer ticker.Stop()
	for {
		if err := m.syncOnce(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Unable to update the node status; will retry", "node", m.cfg.NodeName)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// syncOnce is one turn of the status loop: read the Node, compute the status, PATCH it if it
// changed or the report interval passed, and record events for condition changes. A turn that
// fails makes the next one read the Node from the API server.
func (m *Manager) syncOnce(ctx context.Context) (err error) {
	defer func() { m.readFromAPI = err != nil }()
	node, err := m.readNode(ctx)
	if err != nil {
		return err
	}
	in := m.inputs()
	computed := computeStatus(node.Status, in)
	if !needsReport(node.Status, computed, m.lastReport, in.now, m.cfg.ReportFrequency) {
		klog.FromContext(ctx).V(4).Info("Node status unchanged; not reporting", "node", m.cfg.NodeName)
		return nil
	}
	patched, err := m.patchStatus(ctx, node, computed)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Reported the node status", "node", m.cfg.NodeName, "ready", readyStatus(patched.Status))
	m.recordConditionEvents(node.Status, patched.Status)
	m.lastReport = in.now
	return nil
}

// readNode is the Node as the status is computed from (upstream tryUpdateNodeStatus): from the
// watch cache, which costs no request; from the API server (GET, a consistent read) when the last
// turn failed or the cache may be behind — not synced yet, or no watch open (the API server is
// away, or was: then kube-controller-manager may have marked the node Unknown meanwhile, and this
// turn must see it to put Ready back).
func (m *Manager) readNode(ctx context.Context) (*corev1.Node, error) {
	if !m.readFromAPI {
		if node, ok := m.watch.cached(); ok {
			return node, nil
		}
	}
	node, err := m.cfg.HeartbeatClient.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get node %q: %w", m.cfg.NodeName, err)
	}
	return node, nil
}

// patchStatus sends a strategic merge patch of the status subresource, as upstream's
// nodeutil.PatchNodeStatus does: only what changed travels.
func (m *Manager) patchStatus(ctx context.Context, old *corev1.Node, status corev1.NodeStatus) (*corev1.Node, error) {
	updated := old.DeepCopy()
	updated.Status = status
	oldJSON, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	newJSON, err := json.Marshal(updated)
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, corev1.Node{})
	if err != nil {
		return nil, err
	}
	patched, err := m.cfg.HeartbeatClient.CoreV1().Nodes().Patch(ctx, m.cfg.NodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return nil, fmt.Errorf("patch status of node %q: %w", m.cfg.NodeName, err)
	}
	return patched, nil
}

func (m *Manager) recordConditionEvents(old, cur corev1.NodeStatus) {
	// Upstream records all of these, NodeNotReady included, as Normal events.
	for _, reason := range conditionEvents(old, cur) {
		m.cfg.Recorder.Eventf(m.nodeRef, corev1.EventTypeNormal, reason, "Node %s status is now: %s", m.cfg.NodeName, reason)
	}
}

func readyStatus(st corev1.NodeStatus) corev1.ConditionStatus {
	if c := findCondition(st, corev1.NodeReady); c != nil {
		return c.Status
	}
	return corev1.ConditionUnknown
}

package kuberuntime

// The manager and its calls for a whole pod: SyncPod, KillPod, RemovePod (upstream:
// kuberuntime_manager.go kubeGenericRuntimeManager, SyncPod, killPodWithSyncResult).

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/cm"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// EnvVar and Mount are what the kubelet adds to a container beyond its spec.
type EnvVar struct{ Name, Value string }

// Mount binds a host directory (a projected volume) into a container.
type Mount struct {
	ContainerPath, HostPath string
	ReadOnly                bool
	// Propagation is the volumeMount's mountPropagation (zero: private).
	Propagation runtimeapi.MountPropagation
}

// RunContainerOptions are a container's resolved environment and mounts.
type RunContainerOptions struct {
	Envs   []EnvVar
	Mounts []Mount
	// PodContainerDir is the container's own directory under the pod's (kubelet root
	// pods/<uid>/containers/<name>), where its termination message file is made; "" for none.
	PodContainerDir string
}

// OptionsGenerator resolves env vars (from Secrets, ConfigMaps, the downward API) and volume
// mounts for a container (upstream: RuntimeHelper.GenerateRunContainerOptions). An error keeps the
// container waiting with CreateContainerConfigError and the error as its message. It may block
// on the API server.
type OptionsGenerator interface {
	GenerateRunContainerOptions(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) (*RunContainerOptions, error)
}

// Config configures the runtime manager.
type Config struct {
	// Runtime and Image are the CRI services (pkg/cri/remote's Client has both). Required.
	Runtime runtimeapi.RuntimeServiceClient
	Image   runtimeapi.ImageServiceClient
	// PodLogsDir is where container logs go: <dir>/<ns>_<name>_<uid>/<container>/<n>.log. Required.
	PodLogsDir string
	// Options resolves env and mounts; nil gives containers their literal env values only.
	Options OptionsGenerator
	// DNS gives each sandbox its DNS config, from which the runtime writes the pod's
	// /etc/resolv.conf (pkg/dns); nil leaves DnsConfig unset, the runtime's default.
	DNS PodDNS
	// Probes are the liveness and startup probes' results; nil: no probe ever fails.
	Probes ProbeResults
	// Recorder records the pod Events `kubectl describe pod` lists (Pulling, Pulled, Created,
	// Started, Killing, BackOff, Failed…); nil records none.
	Recorder record.EventRecorder
	// Clock defaults to the real clock; it drives the crash-loop and image-pull backoffs.
	Clock clock.Clock
	// Journal, if set, records every CRI call that changes a pod (RunPodSandbox, PullImage,
	// CreateContainer, StartContainer, StopContainer, StopPodSandbox, RemovePodSandbox) with
	// its duration.
	Journal journal.Recorder
	// MemoryCapacity is the node's memory in bytes, for the containers' oom_score_adj
	// (resources.go); 0 makes every Burstable container's request count as the whole node.
	MemoryCapacity int64
}

// Manager turns pod specs into CRI calls (upstream: kuberuntime_manager.go).
type Manager struct {
	runtime    runtimeapi.RuntimeServiceClient
	image      runtimeapi.ImageServiceClient
	podLogsDir string
	options    OptionsGenerator
	dns        PodDNS
	probes     ProbeResults
	recorder   record.EventRecorder
	clock      clock.Clock
	// hookClient sends httpGet hooks: no keep-alives, no proxy, the pod's certificate verified.
	hookClient *http.Client
	journal    journal.Recorder
	// memoryCapacity and cgroupV2 shape the containers' resources (resources.go).
	memoryCapacity int64
	cgroupV2       bool

	// crashBackoff delays restarts of a crashing container: 10 s doubling to 300 s, keyed by
	// pod and container (upstream: kubelet.go backOff, MaxContainerBackOff).
	crashBackoff *flowcontrol.Backoff
	// pullBackoff delays retries of a failed image pull, keyed by pod and image.
	pullBackoff *flowcontrol.Backoff
	pullMu      sync.Mutex // one pull at a time (serializeImagePulls)
}

// New validates cfg.
func New(cfg Config) (*Manager, error) {
	if cfg.Runtime == nil || cfg.Image == nil || cfg.PodLogsDir == "" {
		return nil, errors.New("kuberuntime: Runtime, Image and PodLogsDir are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Probes == nil {
		cfg.Probes = noProbes{}
	}
	crash := flowcontrol.NewBackOff(10*time.Second, 300*time.Second)
	pull := flowcontrol.NewBackOff(10*time.Second, 300*time.Second)
	crash.Clock, pull.Clock = cfg.Clock, cfg.Clock
	return &Manager{
		runtime:    cfg.Runtime,
		image:      cfg.Image,
		podLogsDir: cfg.PodLogsDir,
		options:    cfg.Options,
		dns:        cfg.DNS,
		probes:     cfg.Probes,
		recorder:   cfg.Recorder,
		hookClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil,
			TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}},
		clock:          cfg.Clock,
		journal:        cfg.Journal,
		crashBackoff:   crash,
		pullBackoff:    pull,
		memoryCapacity: cfg.MemoryCapacity,
		cgroupV2:       cm.IsCgroup2UnifiedMode(),
	}, nil
}

// GCBackoffs forgets back-off entries not touched for twice the maximum back-off (housekeeping),
// as upstream's backOff.GC.
func (m *Manager) GCBackoffs() {
	m.crashBackoff.GC()
	m.pullBackoff.GC()
}

// SetProbeResults sets where the liveness and startup probes' results come from (the kubelet's
// prober, built after the runtime manager). Call it before the first SyncPod.
func (m *Manager) SetProbeResults(p ProbeResults) { m.probes = p }

// SetOptionsGenerator sets where env and mounts come from (the kubelet, once it has built its
// secret manager and volumes). Call it before the first SyncPod.
func (m *Manager) SetOptionsGenerator(g OptionsGenerator) { m.options = g }

// SyncPod makes the runtime match the pod: compute the actions, then kill, create the sandbox,
// and start ephemeral, init and regular containers, pulling their images (upstream:
// kubeGenericRuntimeManager.SyncPod). Each numbered step is one method below.
func (m *Manager) SyncPod(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus) SyncResult {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	result := SyncResult{ContainerErrors: map[string]ContainerError{}}
	actions := computePodActions(pod, status, m.probes)
	logger.V(4).Info("Computed pod actions", "actions", actions)

	// 1. Kill what must go.
	if !m.killForSync(ctx, pod, status, actions, &result) {
		return result
	}
	// 2. A new sandbox, if needed.
	sandboxID, podIP, ok := m.sandboxForSync(ctx, pod, status, actions, &result)
	if !ok {
		return result
	}
	// On every sync, not only when starting: a leftover may need no start to be noticed.
	defer m.pruneDeadContainers(ctx, status)
	// Running containers whose resources changed, resized in place (resize.go).
	m.updateForSync(ctx, pod, status, actions, &result)
	if len(actions.InitContainersToStart) == 0 && len(actions.ContainersToStart) == 0 && len(actions.EphemeralContainersToStart) == 0 {
		return result
	}
	// 3.–5. Ephemeral, init and regular containers.
	config, err := m.sandboxConfig(ctx, pod, actions.Attempt)
	if err != nil {
		result.SandboxError = fmt.Errorf("%s: GeneratePodSandboxConfig for pod %q failed: %w", ReasonConfigSandboxError, podDesc(pod), err)
		return result
	}
	target := startTarget{sandboxID: sandboxID, config: config, podIP: podIP}
	m.startForSync(ctx, pod, status, actions, target, &result)
	return result
}

// killForSync is SyncPod's step 1: the whole pod, or the containers to kill. It returns false
// when the sync must stop (a kill failed, so a replacement never runs beside the old one).
func (m *Manager) killForSync(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus, actions PodActions, result *SyncResult) bool {
	if actions.KillPod {
		if err := m.KillPod(ctx, pod, status, gracePeriod(pod)); err != nil {
			result.SandboxError = err
			return false
		}
		result.Changed = true
		return true
	}
	for id, why := range actions.ContainersToKill {
		klog.FromContext(ctx).V(2).Info("Killing container", "pod", klog.KObj(pod), "container", why.Name, "reason", why.Message)
		if err := m.killContainer(ctx, pod, journal.Pod(pod), id, why.Name, why.Message, killGracePeriod(pod, why), nil); err != nil {
			// As upstream: stop this sync, so a replacement never runs beside the old one.
			result.ContainerErrors[why.Name] = ContainerError{Name: why.Name, Reason: "KillContainerError", Message: err.Error()}
			return false
		}
		result.Changed = true
	}
	return true
}

// sandboxForSync is SyncPod's step 2: the sandbox to start containers in and the pod's IP — the
// existing ones, or a new sandbox's. It returns false when creating the sandbox failed.
func (m *Manager) sandboxForSync(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus, actions PodActions, result *SyncResult) (string, string, bool) {
	if !actions.CreateSandbox {
		podIP := ""
		if len(status.IPs) > 0 {
			podIP = status.IPs[0]
		}
		return actions.SandboxID, podIP, true
	}
	// A new sandbox starts initialization over: the old init container instances go, so the
	// next sync does not take their old exits for this sandbox's (upstream purgeInitContainers).
	m.purgeInitContainers(ctx, pod, status)
	if len(status.Sandboxes) > 0 {
		m.podEvent(pod, corev1.EventTypeNormal, EventSandboxChanged, "Pod sandbox changed, it will be killed and re-created.")
	}
	id, err := m.createSandbox(ctx, pod, actions.Attempt)
	if err != nil {
		m.podEvent(pod, corev1.EventTypeWarning, EventFailedSandbox, "Failed to create pod sandbox: %v", err)
		result.SandboxError = fmt.Errorf("%s: %w", ReasonCreateSandboxError, err)
		return "", "", false
	}
	klog.FromContext(ctx).V(2).Info("Created pod sandbox", "pod", klog.KObj(pod), "sandbox", id, "attempt", actions.Attempt)
	result.Changed = true
	podIP := ""
	if st, err := m.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id}); err == nil {
		podIP = st.GetStatus().GetNetwork().GetIp()
	}
	return id, podIP, true
}

// startTarget is where SyncPod starts containers: the sandbox, its config, the pod's IP.
type startTarget struct {
	sandboxID string
	config    *runtimeapi.PodSandboxConfig
	podIP     string
}

// startForSync is SyncPod's steps 3 to 5: start the containers the actions name, recording in
// result each one that could not start (it is tried again on the next sync).
func (m *Manager) startForSync(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus, actions PodActions, t startTarget, result *SyncResult) {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	start := func(c *corev1.Container, kind string) bool {
		if err := m.startContainer(ctx, pod, c, status, t.sandboxID, t.config, t.podIP); err != nil {
			result.ContainerErrors[c.Name] = *err
			logger.V(2).Info(kind+" not started", "container", c.Name, "reason", err.Reason, "message", err.Message)
			return false
		}
		result.Changed = true
		return true
	}

	// 3. Ephemeral containers, first: a debugger must start even while an init container fails
	// (upstream SyncPod step 5).
	for _, i := range actions.EphemeralContainersToStart {
		start((*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon), "Ephemeral container")
	}

	// 4. Init containers, in order: the next one to run, and sidecars to (re)start. A regular
	// init container that cannot start stops this sync (the next one must wait for it); a
	// sidecar that cannot start does not.
	for _, i := range actions.InitContainersToStart {
		c := &pod.Spec.InitContainers[i]
		if !start(c, "Init container") && !kubecontainer.IsRestartableInitContainer(c) {
			return
		}
	}

	// 5. Regular containers, each behind its crash-loop backoff.
	for _, i := range actions.ContainersToStart {
		start(&pod.Spec.Containers[i], "Container")
	}
}

// KillPod stops every running container of the pod within gracePeriod seconds, then its
// sandboxes. Regular containers stop together; with pod (nil: no order, as housekeeping of a
// pod the kubelet no longer knows), sidecars wait for them and stop last, in reverse order
// (termination_order.go). Stopping what is already gone is not an error (CRI: NotFound is
// success).
func (m *Manager) KillPod(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus, gracePeriod int64) error {
	ref := journal.PodRef{Namespace: status.Namespace, Name: status.Name, UID: string(status.ID)}
	var running []*kubecontainer.ContainerStatus
	for _, c := range status.Containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			running = append(running, c)
		}
	}
	order := terminationOrder(pod, running)
	var wg sync.WaitGroup
	errs := make(chan error, len(running))
	for _, c := range running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- m.killContainer(ctx, pod, ref, c.ID, c.Name, "", gracePeriod, order)
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	for _, s := range status.Sandboxes {
		if s.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		start := m.clock.Now()
		_, err := m.runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.GetId()})
		m.noteCRI("StopPodSandbox", ref, start, err, "id", s.GetId())
		if err != nil && !isNotFound(err) {
			all = append(all, fmt.Errorf("stop sandbox %s: %w", s.GetId(), err))
		}
	}
	return errors.Join(all...)
}

// purgeInitContainers removes every instance of pod's init containers from the runtime.
func (m *Manager) purgeInitContainers(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus) {
	for _, c := range status.Containers {
		if !isInitContainer(pod, c.Name) {
			continue
		}
		if _, err := m.runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID}); err != nil && !isNotFound(err) {
			klog.FromContext(ctx).Error(err, "Failed to remove an init container of a pod getting a new sandbox", "pod", klog.KObj(pod), "container", c.Name)
		}
	}
}

// isInitContainer reports whether name is one of pod's init containers.
func isInitContainer(pod *corev1.Pod, name string) bool {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return true
		}
	}
	return false
}

// RemovePod removes every container and sandbox of a pod that is no longer wanted (housekeeping).
func (m *Manager) RemovePod(ctx context.Context, pod *kubecontainer.RunningPod) error {
	var all []error
	for _, c := range pod.Containers {
		if _, err := m.runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.GetId()}); err != nil && !isNotFound(err) {
			all = append(all, err)
		}
	}
	ref := journal.PodRef{Namespace: pod.Namespace, Name: pod.Name, UID: string(pod.ID)}
	for _, s := range pod.Sandboxes {
		start := m.clock.Now()
		_, err := m.runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.GetId()})
		m.noteCRI("StopPodSandbox", ref, start, err, "id", s.GetId())
		if err != nil && !isNotFound(err) {
			all = append(all, err)
		}
		start = m.clock.Now()
		_, err = m.runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.GetId()})
		m.noteCRI("RemovePodSandbox", ref, start, err, "id", s.GetId())
		if err != nil && !isNotFound(err) {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

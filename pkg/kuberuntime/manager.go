package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/journal"
)

// Waiting reasons the real kubelet shows in containerStatuses[].state.waiting.reason.
const (
	ReasonCrashLoopBackOff   = "CrashLoopBackOff"
	ReasonErrImagePull       = "ErrImagePull"
	ReasonImagePullBackOff   = "ImagePullBackOff"
	ReasonErrImageNeverPull  = "ErrImageNeverPull"
	ReasonCreateContainerErr = "CreateContainerError"
	ReasonRunContainerError  = "RunContainerError"
	ReasonCreateSandboxError = "CreatePodSandboxError"
	ReasonCreateConfigError  = "CreateContainerConfigError"
)

// EnvVar and Mount are what the kubelet adds to a container beyond its spec.
type EnvVar struct{ Name, Value string }

// Mount binds a host directory (a projected volume) into a container.
type Mount struct {
	ContainerPath, HostPath string
	ReadOnly                bool
}

// RunContainerOptions are a container's resolved environment and mounts.
type RunContainerOptions struct {
	Envs   []EnvVar
	Mounts []Mount
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
	// Clock defaults to the real clock; it drives the crash-loop and image-pull backoffs.
	Clock clock.Clock
	// Journal, if set, records every CRI call that changes a pod (RunPodSandbox, PullImage,
	// CreateContainer, StartContainer, StopContainer, StopPodSandbox, RemovePodSandbox) with
	// its duration.
	Journal *journal.Journal
}

// Manager turns pod specs into CRI calls (upstream: kuberuntime_manager.go).
type Manager struct {
	runtime    runtimeapi.RuntimeServiceClient
	image      runtimeapi.ImageServiceClient
	podLogsDir string
	options    OptionsGenerator
	clock      clock.Clock
	journal    *journal.Journal

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
	crash := flowcontrol.NewBackOff(10*time.Second, 300*time.Second)
	pull := flowcontrol.NewBackOff(10*time.Second, 300*time.Second)
	crash.Clock, pull.Clock = cfg.Clock, cfg.Clock
	return &Manager{
		runtime:      cfg.Runtime,
		image:        cfg.Image,
		podLogsDir:   cfg.PodLogsDir,
		options:      cfg.Options,
		clock:        cfg.Clock,
		journal:      cfg.Journal,
		crashBackoff: crash,
		pullBackoff:  pull,
	}, nil
}

// GCBackoffs forgets back-off entries not touched for twice the maximum back-off (housekeeping),
// as upstream's backOff.GC.
func (m *Manager) GCBackoffs() {
	m.crashBackoff.GC()
	m.pullBackoff.GC()
}

// SetOptionsGenerator sets where env and mounts come from (the kubelet, once it has built its
// secret manager and volumes). Call it before the first SyncPod.
func (m *Manager) SetOptionsGenerator(g OptionsGenerator) { m.options = g }

// ContainerError is why a container could not be started in this sync; Reason is the waiting
// reason the pod status shows.
type ContainerError struct {
	Name    string
	Reason  string
	Message string
}

func (e ContainerError) Error() string { return fmt.Sprintf("%s: %s: %s", e.Name, e.Reason, e.Message) }

// SyncResult is what one SyncPod did not manage.
type SyncResult struct {
	// SandboxError is set when a new sandbox could not be created.
	SandboxError error
	// ContainerErrors by container name.
	ContainerErrors map[string]ContainerError
	// Changed reports that the sync killed, created or started something and it succeeded: the
	// runtime now holds a state the PLEG has not listed yet. A sync that only met a back-off or
	// an error leaves it false, so a crash-looping pod does not ask for relists.
	Changed bool
}

// Err joins everything that went wrong, or nil.
func (r SyncResult) Err() error {
	errs := []error{r.SandboxError}
	for _, e := range r.ContainerErrors {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// SyncPod makes the runtime match the pod: compute the actions, then kill, create the sandbox,
// pull images and start containers (upstream: kubeGenericRuntimeManager.SyncPod).
func (m *Manager) SyncPod(ctx context.Context, pod *corev1.Pod, status *kubecontainer.PodStatus) SyncResult {
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod))
	result := SyncResult{ContainerErrors: map[string]ContainerError{}}
	actions := computePodActions(pod, status)
	logger.V(4).Info("Computed pod actions", "actions", actions)

	// 1. Kill what must go.
	if actions.KillPod {
		if err := m.KillPod(ctx, status, gracePeriod(pod)); err != nil {
			result.SandboxError = err
			return result
		}
		result.Changed = true
	} else {
		for id, why := range actions.ContainersToKill {
			logger.V(2).Info("Killing container", "container", why.Name, "reason", why.Message)
			if err := m.stopContainer(ctx, refOf(pod), id, why.Name, gracePeriod(pod)); err != nil {
				result.ContainerErrors[why.Name] = ContainerError{Name: why.Name, Reason: "KillContainerError", Message: err.Error()}
				continue
			}
			result.Changed = true
		}
	}

	// 2. A new sandbox, if needed.
	sandboxID := actions.SandboxID
	podIP := ""
	if len(status.IPs) > 0 && !actions.CreateSandbox {
		podIP = status.IPs[0]
	}
	if actions.CreateSandbox {
		id, err := m.createSandbox(ctx, pod, actions.Attempt)
		if err != nil {
			result.SandboxError = fmt.Errorf("%s: %w", ReasonCreateSandboxError, err)
			return result
		}
		logger.V(2).Info("Created pod sandbox", "sandbox", id, "attempt", actions.Attempt)
		result.Changed = true
		sandboxID = id
		if st, err := m.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id}); err == nil {
			podIP = st.GetStatus().GetNetwork().GetIp()
		}
	}
	// On every sync, not only when starting: a leftover may need no start to be noticed.
	defer m.pruneDeadContainers(ctx, status)
	if len(actions.ContainersToStart) == 0 {
		return result
	}
	sandboxConfig := m.sandboxConfig(pod, actions.Attempt)

	// 3. Start containers, each behind its crash-loop backoff.
	for _, i := range actions.ContainersToStart {
		c := &pod.Spec.Containers[i]
		if err := m.startContainer(ctx, pod, c, status, sandboxID, sandboxConfig, podIP); err != nil {
			result.ContainerErrors[c.Name] = *err
			logger.V(2).Info("Container not started", "container", c.Name, "reason", err.Reason, "message", err.Message)
			continue
		}
		result.Changed = true
	}
	return result
}

// deadContainersKept is how many exited instances of one container a pod keeps: the newest is
// the API's state or lastState, one more for `kubectl logs --previous`, as upstream's GC default
// (MaxPerPodContainer) keeps them.
const deadContainersKept = 2

// deadContainersToRemove picks the exited instances beyond the newest deadContainersKept of each
// container name (status lists them newest first), and the created instances that a newer one
// replaced: never started (the kubelet died between create and start), they never will be. Pure.
func deadContainersToRemove(status *kubecontainer.PodStatus) []string {
	seen := map[string]int{}   // exited instances so far, by name
	newer := map[string]bool{} // an instance newer than this one exists, by name
	var out []string
	for _, c := range status.Containers {
		switch {
		case c.State == runtimeapi.ContainerState_CONTAINER_CREATED && newer[c.Name]:
			out = append(out, c.ID)
		case c.State == runtimeapi.ContainerState_CONTAINER_EXITED:
			seen[c.Name]++
			if seen[c.Name] > deadContainersKept {
				out = append(out, c.ID)
			}
		}
		newer[c.Name] = true
	}
	return out
}

// pruneDeadContainers removes old exited instances so a crash-looping pod does not pile them up,
// and replaced created ones (upstream: the container garbage collector).
func (m *Manager) pruneDeadContainers(ctx context.Context, status *kubecontainer.PodStatus) {
	for _, id := range deadContainersToRemove(status) {
		if _, err := m.runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil && !isNotFound(err) {
			klog.FromContext(ctx).V(2).Info("Failed to remove a dead container", "containerID", id, "err", err)
		}
	}
}

func gracePeriod(pod *corev1.Pod) int64 {
	if pod.DeletionGracePeriodSeconds != nil {
		return *pod.DeletionGracePeriodSeconds
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return 30
}

// startContainer starts one container: backoff check, image, create, start.
func (m *Manager) startContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, status *kubecontainer.PodStatus, sandboxID string, sandboxConfig *runtimeapi.PodSandboxConfig, podIP string) *ContainerError {
	// Without an instance in the runtime (a new runtime, or one that lost its state), continue
	// the restart count from the log files already there, as upstream calcRestartCountByLogDir:
	// a new instance never overwrites an old one's log.
	restartCount := restartCountFromLogDir(filepath.Join(podLogDir(m.podLogsDir, pod.Namespace, pod.Name, pod.UID), c.Name))
	if prev := status.FindContainer(c.Name); prev != nil {
		restartCount = prev.RestartCount + 1
		if prev.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			key := backoffKey(pod, c)
			if m.crashBackoff.IsInBackOffSince(key, prev.FinishedAt) {
				return &ContainerError{Name: c.Name, Reason: ReasonCrashLoopBackOff,
					Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
						m.crashBackoff.Get(key), c.Name, pod.Name, pod.Namespace, pod.UID)}
			}
			m.crashBackoff.Next(key, prev.FinishedAt)
		}
	}
	imageRef, cerr := m.ensureImage(ctx, pod, c, sandboxConfig)
	if cerr != nil {
		return cerr
	}
	opts := &RunContainerOptions{}
	if m.options != nil {
		var err error
		if opts, err = m.options.GenerateRunContainerOptions(ctx, pod, c, podIP); err != nil {
			return &ContainerError{Name: c.Name, Reason: ReasonCreateConfigError, Message: err.Error()}
		}
	}
	logDir := podLogDir(m.podLogsDir, pod.Namespace, pod.Name, pod.UID)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return &ContainerError{Name: c.Name, Reason: ReasonCreateContainerErr, Message: err.Error()}
	}
	start := m.clock.Now()
	created, err := m.runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sandboxID,
		Config:        m.containerConfig(pod, c, restartCount, imageRef, opts),
		SandboxConfig: sandboxConfig,
	})
	m.noteCRI("CreateContainer", refOf(pod), start, err, "id", created.GetContainerId(), "container", c.Name)
	if err != nil {
		return &ContainerError{Name: c.Name, Reason: ReasonCreateContainerErr, Message: err.Error()}
	}
	start = m.clock.Now()
	_, err = m.runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: created.GetContainerId()})
	m.noteCRI("StartContainer", refOf(pod), start, err, "id", created.GetContainerId(), "container", c.Name)
	if err != nil {
		return &ContainerError{Name: c.Name, Reason: ReasonRunContainerError, Message: err.Error()}
	}
	klog.FromContext(ctx).V(2).Info("Started container", "pod", klog.KObj(pod), "container", c.Name, "containerID", created.GetContainerId(), "restartCount", restartCount)
	return nil
}

// restartCountFromLogDir is one more than the highest <n>.log in dir, or 0.
func restartCountFromLogDir(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	next := 0
	for _, e := range entries {
		if n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".log")); err == nil && strings.HasSuffix(e.Name(), ".log") && n+1 > next {
			next = n + 1
		}
	}
	return next
}

func backoffKey(pod *corev1.Pod, c *corev1.Container) string {
	return fmt.Sprintf("%s_%s_%s_%s", pod.Namespace, pod.Name, pod.UID, c.Name)
}

// ensureImage pulls the image as imagePullPolicy says, behind a per-image backoff.
func (m *Manager) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, sandboxConfig *runtimeapi.PodSandboxConfig) (string, *ContainerError) {
	spec := &runtimeapi.ImageSpec{Image: c.Image}
	present := ""
	if c.ImagePullPolicy != corev1.PullAlways {
		st, err := m.image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
		if err != nil {
			return "", &ContainerError{Name: c.Name, Reason: ReasonErrImagePull, Message: err.Error()}
		}
		present = st.GetImage().GetId()
	}
	if present != "" {
		return present, nil
	}
	if c.ImagePullPolicy == corev1.PullNever {
		return "", &ContainerError{Name: c.Name, Reason: ReasonErrImageNeverPull,
			Message: fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)}
	}
	key := pod.Namespace + "_" + pod.Name + "_" + string(pod.UID) + "_" + c.Image
	if m.pullBackoff.IsInBackOffSinceUpdate(key, m.clock.Now()) {
		return "", &ContainerError{Name: c.Name, Reason: ReasonImagePullBackOff, Message: fmt.Sprintf("Back-off pulling image %q", c.Image)}
	}
	m.pullMu.Lock()
	start := m.clock.Now()
	resp, err := m.image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec, SandboxConfig: sandboxConfig})
	m.noteCRI("PullImage", refOf(pod), start, err, "id", resp.GetImageRef(), "container", c.Name, "image", c.Image)
	m.pullMu.Unlock()
	if err != nil {
		m.pullBackoff.Next(key, m.clock.Now())
		return "", &ContainerError{Name: c.Name, Reason: ReasonErrImagePull, Message: fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)}
	}
	m.pullBackoff.Reset(key)
	return resp.GetImageRef(), nil
}

// KillPod stops every running container of the pod (within gracePeriod seconds, in parallel) and
// then its sandboxes. Stopping what is already gone is not an error (CRI: NotFound is success).
func (m *Manager) KillPod(ctx context.Context, status *kubecontainer.PodStatus, gracePeriod int64) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(status.Containers))
	pod := podRef{key: journal.PodKey(status.Namespace, status.Name), uid: string(status.ID)}
	for _, c := range status.Containers {
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		wg.Add(1)
		go func(id, name string) {
			defer wg.Done()
			errs <- m.stopContainer(ctx, pod, id, name, gracePeriod)
		}(c.ID, c.Name)
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
		m.noteCRI("StopPodSandbox", pod, start, err, "id", s.GetId())
		if err != nil && !isNotFound(err) {
			all = append(all, fmt.Errorf("stop sandbox %s: %w", s.GetId(), err))
		}
	}
	return errors.Join(all...)
}

// RemovePod removes every container and sandbox of a pod that is no longer wanted (housekeeping).
func (m *Manager) RemovePod(ctx context.Context, pod *kubecontainer.RunningPod) error {
	var all []error
	for _, c := range pod.Containers {
		if _, err := m.runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.GetId()}); err != nil && !isNotFound(err) {
			all = append(all, err)
		}
	}
	ref := podRef{key: journal.PodKey(pod.Namespace, pod.Name), uid: string(pod.ID)}
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

func (m *Manager) stopContainer(ctx context.Context, pod podRef, id, name string, gracePeriod int64) error {
	start := m.clock.Now()
	_, err := m.runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: gracePeriod})
	m.noteCRI("StopContainer", pod, start, err, "id", id, "container", name)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	return nil
}

// podRef names a pod in the journal.
type podRef struct{ key, uid string }

func refOf(pod *corev1.Pod) podRef {
	return podRef{key: journal.PodKey(pod.Namespace, pod.Name), uid: string(pod.UID)}
}

// noteCRI records one CRI call of pod in the journal: its duration since start, its error, and
// the fields in kv (key, value, key, value…; empty values are left out).
func (m *Manager) noteCRI(call string, pod podRef, start time.Time, err error, kv ...string) {
	if m.journal == nil {
		return
	}
	fields := map[string]string{"duration": m.clock.Since(start).Round(time.Microsecond).String()}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			fields[kv[i]] = kv[i+1]
		}
	}
	if err != nil {
		fields["error"] = err.Error()
	}
	m.journal.Record(journal.Event{Source: journal.SourceCRI, Kind: call, Pod: pod.key, UID: pod.uid, Fields: fields})
}

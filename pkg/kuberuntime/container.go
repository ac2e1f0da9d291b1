package kuberuntime

// Starting and stopping one container (upstream: kuberuntime_container.go startContainer and
// killContainer; the crash-loop back-off of kuberuntime_manager.go doBackOff).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// startContainer starts one container: backoff check, image, create, start.
func (m *Manager) startContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, status *kubecontainer.PodStatus, sandboxID string, sandboxConfig *runtimeapi.PodSandboxConfig, podIP string) *ContainerError {
	// Without an instance in the runtime (a new runtime, or one that lost its state), continue
	// the restart count from the log files already there, as upstream calcRestartCountByLogDir:
	// a new instance never overwrites an old one's log.
	restartCount := restartCountFromLogDir(filepath.Join(podLogDir(m.podLogsDir, pod.Namespace, pod.Name, pod.UID), c.Name))
	if prev := status.FindContainer(c.Name); prev != nil {
		restartCount = prev.RestartCount + 1
	}
	// The crash-loop back-off counts from the newest instance that exited — also when the newest
	// one still runs and is being replaced (a liveness kill in this same sync), as upstream
	// doBackOff: repeated liveness kills slow down into CrashLoopBackOff too.
	if exited := newestExited(status, c.Name); exited != nil {
		key := backoffKey(pod, c)
		if m.crashBackoff.IsInBackOffSince(key, exited.FinishedAt) {
			m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventBackOff, "Back-off restarting failed container %s in pod %s", c.Name, podDesc(pod))
			return &ContainerError{Name: c.Name, Reason: ReasonCrashLoopBackOff,
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
					m.crashBackoff.Get(key), c.Name, pod.Name, pod.Namespace, pod.UID)}
		}
		m.crashBackoff.Next(key, exited.FinishedAt)
	}
	imageRef, cerr := m.ensureImage(ctx, pod, c, sandboxConfig)
	if cerr != nil {
		m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventFailed, "Error: %s", cerr.Reason)
		return cerr
	}
	opts := &RunContainerOptions{}
	if m.options != nil {
		var err error
		if opts, err = m.options.GenerateRunContainerOptions(ctx, pod, c, podIP); err != nil {
			m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventFailed, "Error: %v", err)
			return &ContainerError{Name: c.Name, Reason: ReasonCreateConfigError, Message: err.Error()}
		}
	}
	logDir := podLogDir(m.podLogsDir, pod.Namespace, pod.Name, pod.UID)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return &ContainerError{Name: c.Name, Reason: ReasonCreateContainerErr, Message: err.Error()}
	}
	config, err := m.containerConfig(ctx, pod, c, restartCount, imageRef, opts)
	if err != nil { // e.g. runAsNonRoot and the image runs as root (verifyRunAsNonRoot)
		m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventFailed, "Error: %v", statusMessage(err))
		return &ContainerError{Name: c.Name, Reason: ReasonCreateConfigError, Message: statusMessage(err)}
	}
	if err := shareTargetPID(pod, c.Name, status, config); err != nil {
		m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventFailed, "Error: %v", err)
		return &ContainerError{Name: c.Name, Reason: ReasonCreateConfigError, Message: err.Error()}
	}
	termination, err := terminationMessageMount(c, opts.PodContainerDir)
	if err != nil {
		return &ContainerError{Name: c.Name, Reason: ReasonCreateContainerErr, Message: err.Error()}
	}
	if termination != nil {
		config.Mounts = append(config.Mounts, termination)
	}
	start := m.clock.Now()
	created, err := m.runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId:  sandboxID,
		Config:        config,
		SandboxConfig: sandboxConfig,
	})
	m.noteCRI("CreateContainer", journal.Pod(pod), start, err, "id", created.GetContainerId(), "container", c.Name)
	if err != nil {
		m.containerEvent(pod, c.Name, "", corev1.EventTypeWarning, EventFailed, "Error: %v", statusMessage(err))
		return &ContainerError{Name: c.Name, Reason: ReasonCreateContainerErr, Message: err.Error()}
	}
	m.containerEvent(pod, c.Name, created.GetContainerId(), corev1.EventTypeNormal, EventCreated, "Container created")
	start = m.clock.Now()
	_, err = m.runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: created.GetContainerId()})
	m.noteCRI("StartContainer", journal.Pod(pod), start, err, "id", created.GetContainerId(), "container", c.Name)
	if err != nil {
		m.containerEvent(pod, c.Name, created.GetContainerId(), corev1.EventTypeWarning, EventFailed, "Error: %v", statusMessage(err))
		return &ContainerError{Name: c.Name, Reason: ReasonRunContainerError, Message: err.Error()}
	}
	m.containerEvent(pod, c.Name, created.GetContainerId(), corev1.EventTypeNormal, EventStarted, "Container started")
	if cerr := m.postStart(ctx, pod, c, created.GetContainerId(), podIP); cerr != nil {
		return cerr
	}
	klog.FromContext(ctx).V(2).Info("Started container", "pod", klog.KObj(pod), "container", c.Name, "containerID", created.GetContainerId(), "restartCount", restartCount)
	return nil
}

// newestExited is the newest instance of container name that has exited, or nil.
// shareTargetPID puts an ephemeral container with a targetContainerName (kubectl debug --target)
// in that container's PID namespace, so the debugger sees its processes (upstream
// kuberuntime_container.go getTargetID and NamespaceMode TARGET).
func shareTargetPID(pod *corev1.Pod, name string, status *kubecontainer.PodStatus, config *runtimeapi.ContainerConfig) error {
	for i := range pod.Spec.EphemeralContainers {
		ec := &pod.Spec.EphemeralContainers[i]
		if ec.Name != name || ec.TargetContainerName == "" {
			continue
		}
		target := status.FindContainer(ec.TargetContainerName)
		if target == nil {
			return fmt.Errorf("unable to find target container %s", ec.TargetContainerName)
		}
		ns := config.GetLinux().GetSecurityContext().GetNamespaceOptions()
		if ns == nil {
			return fmt.Errorf("container %s has no namespace options", name)
		}
		ns.Pid, ns.TargetId = runtimeapi.NamespaceMode_TARGET, target.ID
	}
	return nil
}

func newestExited(status *kubecontainer.PodStatus, name string) *kubecontainer.ContainerStatus {
	for _, c := range status.Containers { // newest first
		if c.Name == name && c.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			return c
		}
	}
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

func (m *Manager) stopContainer(ctx context.Context, pod journal.PodRef, id, name string, gracePeriod int64) error {
	start := m.clock.Now()
	_, err := m.runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: gracePeriod})
	m.noteCRI("StopContainer", pod, start, err, "id", id, "container", name)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	return nil
}

// gracePeriod is how many seconds the pod's containers get to stop: the deletion's grace period,
// else the spec's terminationGracePeriodSeconds, else 30.
func gracePeriod(pod *corev1.Pod) int64 {
	if pod.DeletionGracePeriodSeconds != nil {
		return *pod.DeletionGracePeriodSeconds
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return 30
}

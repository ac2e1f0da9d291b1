package prober

// Started and Ready of each container status, from the results (upstream: prober_manager.go
// UpdatePodStatus, isContainerStarted, setReadyStateOnKubeletRestart).

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// UpdatePodStatus sets Started and Ready of every container status in status, which the kubelet
// is computing for pod (generateAPIPodStatus), from the probe results:
//
//	Started  running, and: the startup result is Success; with no startup result, the status
//	         already said Started (the kubelet restarted), or there is no startup probe
//	Ready    (only when Started) running, and: the readiness result is Success; with no
//	         Success, there is no readiness probe; then the kubelet-restart rule (readyInputs)
//
// A container with a readiness probe that is not Ready gets a probe at once (its worker's
// trigger). Plain init containers are Ready once they exited 0, and get no probe results;
// sidecars follow the rules of containers. It does not block.
func (m *Manager) UpdatePodStatus(pod *corev1.Pod, status *corev1.PodStatus) {
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		m.setStartedAndReady(pod, cs, findContainer(pod.Spec.Containers, cs.Name))
	}
	for i := range status.InitContainerStatuses {
		cs := &status.InitContainerStatuses[i]
		spec := findContainer(pod.Spec.InitContainers, cs.Name)
		if spec == nil || !kubecontainer.IsRestartableInitContainer(spec) {
			started := m.started(pod, cs)
			cs.Started = &started
			if spec != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
				cs.Ready = true
			}
			continue
		}
		m.setStartedAndReady(pod, cs, spec)
	}
}

// setStartedAndReady applies the rules to one container status; spec may be nil for a container
// (a status with no container in the spec: no kubelet-restart rule then, as upstream).
func (m *Manager) setStartedAndReady(pod *corev1.Pod, cs *corev1.ContainerStatus, spec *corev1.Container) {
	started := m.started(pod, cs)
	cs.Started = &started
	if !started {
		return // Ready stays as the caller computed it
	}
	in := readyInputs{running: cs.State.Running != nil}
	in.result, in.hasResult = m.cfg.Readiness.Get(cs.ContainerID)
	w, hasWorker := m.getWorker(pod.UID, cs.Name, Readiness)
	in.hasWorker = hasWorker
	if spec != nil {
		in.restarted = startedBefore(*cs, m.start.Add(-restartGrace))
		in.hasProbe = spec.ReadinessProbe != nil
		in.podReady = podReady(pod)
	}
	ready, trigger := computeReady(in)
	if trigger && !w.trigger() {
		m.logger().V(4).Info("Failed to trigger a manual run, one is pending", "pod", klog.KObj(pod), "containerName", cs.Name, "probeType", Readiness)
	}
	cs.Ready = ready
}

// started says whether the container counts as started.
func (m *Manager) started(pod *corev1.Pod, cs *corev1.ContainerStatus) bool {
	if cs.State.Running == nil {
		return false
	}
	if r, ok := m.cfg.Startup.Get(cs.ContainerID); ok {
		return r == Success
	}
	if cs.Started != nil && *cs.Started {
		return true // started before the kubelet restarted (ChangeContainerStatusOnKubeletRestart off)
	}
	_, hasStartupProbe := m.getWorker(pod.UID, cs.Name, Startup)
	return !hasStartupProbe
}

// readyInputs is what decides a started container's Ready.
type readyInputs struct {
	running   bool
	result    Result // the readiness result, if hasResult
	hasResult bool
	hasWorker bool // a readiness worker exists
	// The kubelet-restart rule, only when the container is in the spec: restarted (running since
	// before the kubelet started, less the grace), its readiness probe, and the pod's Ready
	// condition as the API last had it.
	restarted, hasProbe, podReady bool
}

// computeReady decides Ready, and whether to trigger a readiness probe now. Pure.
func computeReady(in readyInputs) (ready, trigger bool) {
	switch {
	case !in.running:
		return false, false
	case in.hasResult && in.result == Success:
		return true, false
	}
	ready = !in.hasWorker // no readiness probe: ready
	trigger = in.hasWorker
	if in.restarted {
		// A container already running when the kubelet started: do not flap to not ready while
		// its probe has not run yet; keep what the pod's Ready condition said.
		if !ready && !in.hasResult {
			ready = true
		}
		if in.hasProbe && !in.podReady {
			ready = false
		}
	}
	return ready, trigger
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func findContainer(containers []corev1.Container, name string) *corev1.Container {
	for i := range containers {
		if containers[i].Name == name {
			return &containers[i]
		}
	}
	return nil
}

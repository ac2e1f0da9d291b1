package kubelet

import (
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilnet "k8s.io/utils/net"
	"k8s.io/utils/ptr"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/qos"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

// statusInputs is what generateAPIPodStatus needs besides the pod and the runtime's view.
type statusInputs struct {
	nodeIP      string
	runtimeName string                                // prefix of containerIDs, e.g. "containerd"
	reasons     map[string]kuberuntime.ContainerError // why a container is waiting (last sync)
	now         time.Time
	// probes sets each container status's Ready and Started from the probes' results (the
	// prober manager's UpdatePodStatus); nil: as if no container had a probe.
	probes readinessUpdater
	// evict, when set, fails the pod with its reason and message (activeDeadlineSeconds, or the
	// eviction manager's Evicted with its DisruptionTarget condition).
	evict *podEviction
	// resizePending and resizeInProgress, when set, are the pod's PodResizePending and
	// PodResizeInProgress conditions (pod_resize.go, pod_resize_status.go).
	resizePending, resizeInProgress *corev1.PodCondition
}

// readinessUpdater sets Ready and Started on a pod's container statuses (upstream:
// prober.Manager.UpdatePodStatus). It must not block.
type readinessUpdater interface {
	UpdatePodStatus(pod *corev1.Pod, status *corev1.PodStatus)
}

// generateAPIPodStatus turns the runtime's view of a pod into the API's PodStatus: container and
// init container statuses, phase, conditions, IPs, start time (upstream: kubelet_pods.go
// generateAPIPodStatus, convertToAPIContainerStatuses, getPhase; status/generate.go). hostIP(s)
// are the node's; podIP(s) the runtime's, or the node's for a host-network pod. The conditions
// others own are kept from the pod's API status; observedGeneration is the status manager's to
// set (SetPodStatus). Pure.
func generateAPIPodStatus(pod *corev1.Pod, rs *kubecontainer.PodStatus, in statusInputs) corev1.PodStatus {
	old := pod.Status
	st := corev1.PodStatus{
		QOSClass: qos.GetPodQOS(pod), // the API server's, or computed for a static pod
		HostIP:   in.nodeIP,
		HostIPs:  []corev1.HostIP{{IP: in.nodeIP}},
	}
	st.StartTime = old.StartTime
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: in.now.Truncate(time.Second)}
	}
	// A host-network pod has the node's IP, whatever its sandbox reports (upstream's GetPodStatus
	// reads no sandbox IPs for it; generateAPIPodStatus then gives it the node's).
	ips := []string{in.nodeIP}
	if !pod.Spec.HostNetwork {
		ips = sortPodIPs(rs.IPs, in.nodeIP)
	}
	for _, ip := range ips {
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		st.PodIP = ips[0]
	}

	// Until every init container has done its part, the others wait "PodInitializing".
	waiting := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		waiting = "PodInitializing"
	}
	for i := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, initContainerStatus(pod, &pod.Spec.InitContainers[i], rs, in, waiting))
	}
	for i := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(pod, &pod.Spec.Containers[i], rs, in, old.ContainerStatuses, waiting))
	}
	// Ephemeral containers: a status once the kubelet has tried to start them; never ready.
	for i := range pod.Spec.EphemeralContainers {
		c := (*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		st.EphemeralContainerStatuses = append(st.EphemeralContainerStatuses, containerStatus(pod, c, rs, in, old.EphemeralContainerStatuses, "ContainerCreating"))
	}
	if in.probes != nil {
		in.probes.UpdatePodStatus(pod, &st)
	} else {
		noProbes(pod, &st)
	}

	st.Phase = podPhase(pod, &st, anyRegularContainerActive(pod, rs))
	// A terminal phase never goes back (the API server refuses it, and so do we).
	if old.Phase == corev1.PodSucceeded || old.Phase == corev1.PodFailed {
		st.Phase = old.Phase
	}
	if st.Phase == old.Phase { // the reason and message go with the phase (e.g. DeadlineExceeded)
		st.Reason, st.Message = old.Reason, old.Message
	}
	if in.evict != nil && old.Phase != corev1.PodSucceeded { // upstream: the PodSyncHandlers' ShouldEvict
		st.Phase, st.Reason, st.Message = corev1.PodFailed, in.evict.reason, in.evict.message
	}
	// The conditions of others first, as the API has them (readiness gates, DisruptionTarget):
	// Ready reads the gates' among them. Then the kubelet's own.
	for _, c := range pod.Status.Conditions {
		if !statusmanager.PodConditionByKubelet(c.Type) && (in.evict == nil || in.evict.condition == nil || c.Type != in.evict.condition.Type) {
			st.Conditions = append(st.Conditions, *c.DeepCopy())
		}
	}
	if in.evict != nil && in.evict.condition != nil { // upstream: the eviction's UpdatePodCondition
		st.Conditions = append(st.Conditions, *in.evict.condition) // its lastTransitionTime: the status manager's
	}
	st.Conditions = append(st.Conditions, podConditions(pod, &st, kuberuntime.SandboxReady(pod, rs))...)
	st.Conditions = append(st.Conditions, resizeConditions(in.resizePending, in.resizeInProgress)...)
	return st
}

// sortPodIPs picks the pod's IPs from those the runtime reports, at most one per family: first
// the first one of the node IP's family, then the first one of the other family; each is
// written in its canonical form (upstream kubelet_pods.go sortPodIPs).
func sortPodIPs(ips []string, nodeIP string) []string {
	primary, secondary := utilnet.IsIPv4, utilnet.IsIPv6
	if utilnet.IsIPv6String(nodeIP) {
		primary, secondary = utilnet.IsIPv6, utilnet.IsIPv4
	}
	var out []string
	for _, family := range []func(net.IP) bool{primary, secondary} {
		for _, s := range ips {
			if ip := utilnet.ParseIPSloppy(s); ip != nil && family(ip) {
				out = append(out, ip.String())
				break
			}
		}
	}
	return out
}

// initContainerStatus is containerStatus for an init container. One that succeeded stays
// terminated (it will not run again); one the runtime no longer has, in a pod whose regular
// containers exist, is taken to have completed.
func initContainerStatus(pod *corev1.Pod, c *corev1.Container, rs *kubecontainer.PodStatus, in statusInputs, waiting string) corev1.ContainerStatus {
	inst := rs.FindContainer(c.Name)
	if inst == nil && !kubecontainer.IsRestartableInitContainer(c) && kuberuntime.AnyRegularContainerCreated(pod, rs) {
		return corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			Reason: "Completed", ExitCode: 0,
			Message: "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"}}}
	}
	return containerStatus(pod, c, rs, in, pod.Status.InitContainerStatuses, waiting)
}

// containerStatus is the API status of one container: its newest instance's state, the previous
// instance as lastState, or waiting with the reason the last sync gave (default: waiting).
func containerStatus(pod *corev1.Pod, c *corev1.Container, rs *kubecontainer.PodStatus, in statusInputs, old []corev1.ContainerStatus, waiting string) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image}
	var instances []*kubecontainer.ContainerStatus
	for _, inst := range rs.Containers {
		if inst.Name == c.Name {
			instances = append(instances, inst)
		}
	}
	if len(instances) == 0 {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting}
		for _, prev := range old { // the runtime lost it: keep what we knew
			if prev.Name != c.Name {
				continue
			}
			if prev.State.Terminated != nil {
				// It ended and the runtime lost it (a restarted kubelet with an empty runtime, GC):
				// that stays true until a new instance runs, and the API server refuses a
				// terminated container of a Never pod going back to waiting. Upstream:
				// convertToAPIContainerStatuses keeps the old terminated status.
				prev.Ready, prev.Started = false, ptr.To(false)
				return prev
			}
			cs.RestartCount, cs.LastTerminationState = prev.RestartCount, prev.LastTerminationState
		}
	} else {
		latest := instances[0]
		cs.ContainerID = in.runtimeName + "://" + latest.ID
		cs.ImageID = latest.ImageRef
		cs.RestartCount = int32(latest.RestartCount)
		cs.State = containerState(latest, in.runtimeName)
		if len(instances) > 1 {
			cs.LastTerminationState = containerState(instances[1], in.runtimeName)
		}
	}
	// A container to be started (again) shows why it waits (CrashLoopBackOff, ErrImagePull…),
	// an exited one with its exit as its last state, as `kubectl get pods` shows it.
	latest := rs.FindContainer(c.Name)
	setStatusResources(&cs, c, latest) // pod_resize_status.go
	if e, ok := in.reasons[c.Name]; ok && kubecontainer.ShouldContainerBeRestarted(c, pod, rs) && (latest == nil || latest.State != runtimeapi.ContainerState_CONTAINER_RUNNING) {
		if cs.State.Terminated != nil {
			cs.LastTerminationState = cs.State
		}
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: e.Reason, Message: e.Message}}
	}
	return cs
}

func containerState(c *kubecontainer.ContainerStatus, runtimeName string) corev1.ContainerState {
	switch c.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: c.StartedAt.Truncate(time.Second)}}}
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		reason := c.Reason
		if reason == "" {
			reason = "Completed"
			if c.ExitCode != 0 {
				reason = "Error"
			}
		}
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: c.ExitCode, Reason: reason, Message: c.Message,
			StartedAt:   metav1.Time{Time: c.StartedAt.Truncate(time.Second)},
			FinishedAt:  metav1.Time{Time: c.FinishedAt.Truncate(time.Second)},
			ContainerID: runtimeName + "://" + c.ID,
		}}
	default:
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
}

// noProbes sets Ready and Started as the prober manager does for containers without probes:
// started once running; a regular container or sidecar is ready while it runs; a regular init
// container is ready once it has succeeded.
func noProbes(pod *corev1.Pod, st *corev1.PodStatus) {
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.Started = ptr.To(cs.State.Running != nil)
		cs.Ready = cs.State.Running != nil
	}
	for i := range st.InitContainerStatuses {
		cs := &st.InitContainerStatuses[i]
		cs.Started = ptr.To(cs.State.Running != nil)
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			cs.Ready = cs.State.Running != nil
		} else {
			cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		}
	}
}

// anyRegularContainerActive reports whether a regular container has an instance in the current
// (newest) sandbox, in any state: the pod got past its init containers there (upstream
// HasAnyActiveRegularContainerStarted). An instance belongs to the newest sandbox when it was
// created after it.
func anyRegularContainerActive(pod *corev1.Pod, rs *kubecontainer.PodStatus) bool {
	if len(rs.Sandboxes) == 0 {
		return false
	}
	since := time.Unix(0, rs.Sandboxes[0].GetCreatedAt())
	for i := range pod.Spec.Containers {
		if cs := rs.FindContainer(pod.Spec.Containers[i].Name); cs != nil && !cs.CreatedAt.Before(since) {
			return true
		}
	}
	return false
}

package kuberuntime

// The Events the kubelet records about a pod's containers, which `kubectl describe pod` lists
// (upstream: kuberuntime_container.go recordContainerEvent, pkg/kubelet/events/event.go for the
// reasons, pkg/kubelet/container/ref.go GenerateContainerRef for the field path).

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
)

// Event reasons, as upstream pkg/kubelet/events.
const (
	EventPulling           = "Pulling"
	EventPulled            = "Pulled"
	EventFailed            = "Failed"
	EventBackOff           = "BackOff"
	EventErrImageNeverPull = "ErrImageNeverPull"
	EventCreated           = "Created"
	EventStarted           = "Started"
	EventKilling           = "Killing"
	EventSandboxChanged    = "SandboxChanged"
	EventFailedSandbox     = "FailedCreatePodSandBox"
)

// podRef is the reference an Event about pod carries; fieldPath names a container in it
// ("spec.containers{app}", "spec.initContainers{init}"), or is empty for the pod itself.
func podRef(pod *corev1.Pod, fieldPath string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name,
		UID: pod.UID, ResourceVersion: pod.ResourceVersion, FieldPath: fieldPath}
}

// containerFieldPath locates container name in pod's spec.
func containerFieldPath(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return "spec.initContainers{" + name + "}"
		}
	}
	return "spec.containers{" + name + "}"
}

// containerEvent records an Event about container name of pod. A runtime error often holds the
// container's ID; it is replaced by the container's name so that repeats aggregate (as upstream).
func (m *Manager) containerEvent(pod *corev1.Pod, name, containerID, eventType, reason, format string, args ...any) {
	if m.recorder == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if containerID != "" {
		msg = strings.ReplaceAll(msg, containerID, name)
	}
	m.recorder.Event(podRef(pod, containerFieldPath(pod, name)), eventType, reason, msg)
}

// podEvent records an Event about pod itself.
func (m *Manager) podEvent(pod *corev1.Pod, eventType, reason, format string, args ...any) {
	if m.recorder != nil {
		m.recorder.Eventf(podRef(pod, ""), eventType, reason, format, args...)
	}
}

// podDesc is how upstream's messages name a pod: name_namespace(uid) (util/format.Pod).
func podDesc(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// statusMessage is a CRI error's message without gRPC's "rpc error: code = … desc =" wrapper,
// as upstream's Failed Events show it.
func statusMessage(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}

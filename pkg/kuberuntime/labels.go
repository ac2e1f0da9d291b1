package kuberuntime

import (
	"encoding/json"
	"hash/fnv"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The label and annotation keys the real kubelet puts on sandboxes and containers
// (pkg/kubelet/types/labels.go, kuberuntime/labels.go). Keeping them means crictl shows our pods
// the way it shows any kubelet's, and lets us map containers back to pods after a restart.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"

	annotationContainerHash            = "io.kubernetes.container.hash"
	annotationRestartCount             = "io.kubernetes.container.restartCount"
	annotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
	annotationPodGracePeriod           = "io.kubernetes.pod.terminationGracePeriod"
)

func sandboxLabels(pod *corev1.Pod) map[string]string {
	labels := map[string]string{}
	for k, v := range pod.Labels {
		labels[k] = v
	}
	labels[LabelPodName] = pod.Name
	labels[LabelPodNamespace] = pod.Namespace
	labels[LabelPodUID] = string(pod.UID)
	return labels
}

func containerLabels(pod *corev1.Pod, c *corev1.Container) map[string]string {
	return map[string]string{
		LabelPodName:       pod.Name,
		LabelPodNamespace:  pod.Namespace,
		LabelPodUID:        string(pod.UID),
		LabelContainerName: c.Name,
	}
}

func containerAnnotations(pod *corev1.Pod, c *corev1.Container, restartCount int) map[string]string {
	a := map[string]string{
		annotationContainerHash:            strconv.FormatUint(HashContainer(c), 16),
		annotationRestartCount:             strconv.Itoa(restartCount),
		annotationTerminationMessagePath:   c.TerminationMessagePath,
		annotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
	}
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		a[annotationPodGracePeriod] = strconv.FormatInt(*pod.Spec.TerminationGracePeriodSeconds, 10)
	}
	return a
}

// HashContainer is a fingerprint of the parts of a container spec that require a restart when
// they change. Like upstream's HashContainer it leaves out resources (resized in place); unlike
// upstream it hashes the whole remaining spec as JSON, which is simpler and stable enough within
// one minikubelet version.
func HashContainer(c *corev1.Container) uint64 {
	cp := c.DeepCopy()
	cp.Resources = corev1.ResourceRequirements{}
	cp.ResizePolicy = nil
	data, _ := json.Marshal(cp) // a Container always marshals
	h := fnv.New64a()
	_, _ = h.Write(data)
	return h.Sum64()
}

// podLogDir is <pod-logs-dir>/<namespace>_<name>_<uid>, the CRI sandbox LogDirectory.
func podLogDir(root, namespace, name string, uid types.UID) string {
	return filepath.Join(root, namespace+"_"+name+"_"+string(uid))
}

// ContainerLogFile is where a container instance's log is on the host:
// <pod-logs-dir>/<namespace>_<name>_<uid>/<container>/<restartCount>.log.
func ContainerLogFile(podLogsDir, namespace, name string, uid types.UID, container string, restartCount int) string {
	return filepath.Join(podLogDir(podLogsDir, namespace, name, uid), containerLogPath(container, restartCount))
}

// containerLogPath is the container's LogPath, relative to the sandbox's LogDirectory:
// <container>/<restartCount>.log, as upstream.
func containerLogPath(name string, restartCount int) string {
	return filepath.Join(name, strconv.Itoa(restartCount)+".log")
}

package container

import (
	corev1 "k8s.io/api/core/v1"
)

// Where a pod came from, as the pod sources stamp it (upstream pkg/kubelet/types/pod_update.go;
// pkg/podsource writes them and re-exports them under the same names).
const (
	// ConfigSourceAnnotationKey names the source a pod came from: ApiserverSource, or another
	// source ("file" for a manifest in --pod-manifest-path).
	ConfigSourceAnnotationKey = "kubernetes.io/config.source"
	// ApiserverSource is the source of the pods the API server binds to this node.
	ApiserverSource = "api"
)

// IsStaticPod reports whether pod came from a source other than the API server (a manifest
// file): its config.source annotation is set and is not "api" (upstream kubetypes.IsStaticPod).
// A pod without the annotation has not been through a pod source and is not static. A static
// pod's status is written to its mirror pod, and it may run before the API server is reached.
func IsStaticPod(pod *corev1.Pod) bool {
	source, ok := pod.Annotations[ConfigSourceAnnotationKey]
	return ok && source != ApiserverSource
}

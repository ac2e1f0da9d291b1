package podsource

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Op is what happened to the pods of one PodUpdate (upstream kubetypes.PodOperation).
type Op int

const (
	// ADD: pods the kubelet has not seen from this source before.
	ADD Op = iota
	// UPDATE: spec, labels, annotations or deletion grace period changed.
	UPDATE
	// DELETE: graceful deletion started (deletionTimestamp is set); the kubelet stops the pod
	// within its grace period, then the status manager finishes the deletion in the API.
	DELETE
	// REMOVE: the pod is gone from its source; the kubelet stops it and forgets it.
	REMOVE
	// RECONCILE: only the status changed (someone else wrote pods/status); the kubelet's own
	// status is the truth, so it reconciles.
	RECONCILE
)

// String names the operation as upstream's constants do.
func (o Op) String() string {
	switch o {
	case ADD:
		return "ADD"
	case UPDATE:
		return "UPDATE"
	case DELETE:
		return "DELETE"
	case REMOVE:
		return "REMOVE"
	case RECONCILE:
		return "RECONCILE"
	default:
		return fmt.Sprintf("Op(%d)", int(o))
	}
}

// PodUpdate is one message on the Updates channel: pods of one source that went through the same
// operation. The pods are copies; the receiver owns them.
type PodUpdate struct {
	Pods   []*corev1.Pod
	Op     Op
	Source string
}

// Source names, written into each pod's kubernetes.io/config.source annotation. ApiserverSource
// is pkg/container's, which decides IsStaticPod from it.
const (
	ApiserverSource = kubecontainer.ApiserverSource
	FileSource      = "file"
)

// Annotation keys the kubelet reads and writes on pods (upstream pkg/kubelet/types/pod_update.go).
const (
	// ConfigSourceAnnotationKey names the source a pod came from ("api" or "file"); it is
	// pkg/container's, which decides IsStaticPod from it.
	ConfigSourceAnnotationKey = kubecontainer.ConfigSourceAnnotationKey
	// ConfigHashAnnotationKey holds a static pod's hash (its UID); mirror pods copy it into
	// ConfigMirrorAnnotationKey.
	ConfigHashAnnotationKey = "kubernetes.io/config.hash"
	// ConfigMirrorAnnotationKey marks a mirror pod: the API copy of a static pod.
	ConfigMirrorAnnotationKey = corev1.MirrorPodAnnotationKey
	// ConfigFirstSeenAnnotationKey is when the kubelet first saw the pod (RFC3339), set once by
	// the merger.
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
)

package podmanager

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/podsource"
)

// MirrorClient creates and deletes mirror pods in the API server (upstream basicMirrorClient).
type MirrorClient struct {
	client   kubernetes.Interface
	nodeName string
}

// NewMirrorClient returns a MirrorClient that creates mirror pods owned by the Node nodeName.
func NewMirrorClient(client kubernetes.Interface, nodeName string) *MirrorClient {
	return &MirrorClient{client: client, nodeName: nodeName}
}

// CreateMirrorPod creates the API copy of staticPod: same namespace, name, labels, annotations and
// spec, plus the annotation kubernetes.io/config.mirror=<the static pod's config.hash> and an
// owner reference to this Node, which the NodeRestriction admission plugin requires of a mirror
// pod a kubelet creates (KEP-1314). A mirror pod that already exists is not an error: if it is
// stale, the kubelet sees that with MirrorPodMatches and replaces it.
func (c *MirrorClient) CreateMirrorPod(ctx context.Context, staticPod *corev1.Pod) error {
	logger := klog.FromContext(ctx)
	hash, ok := staticPod.Annotations[podsource.ConfigHashAnnotationKey]
	if !ok || hash == "" {
		return fmt.Errorf("create mirror pod for %s/%s: it is not a static pod (no %s annotation)",
			staticPod.Namespace, staticPod.Name, podsource.ConfigHashAnnotationKey)
	}
	nodeUID, err := c.nodeUID(ctx)
	if err != nil {
		return fmt.Errorf("create mirror pod for %s/%s: %w", staticPod.Namespace, staticPod.Name, err)
	}
	mirror := mirrorPodFor(staticPod, hash, c.nodeName, nodeUID)

	_, err = c.client.CoreV1().Pods(mirror.Namespace).Create(ctx, mirror, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		logger.V(2).Info("Mirror pod already exists", "pod", klog.KObj(mirror))
		return nil
	case err != nil:
		return fmt.Errorf("create mirror pod %s/%s: %w", mirror.Namespace, mirror.Name, err)
	}
	logger.V(2).Info("Created mirror pod", "pod", klog.KObj(mirror), "staticPodUID", staticPod.UID)
	return nil
}

// mirrorPodFor builds the mirror pod of staticPod. The API server assigns its own UID.
func mirrorPodFor(staticPod *corev1.Pod, hash, nodeName string, nodeUID types.UID) *corev1.Pod {
	annotations := make(map[string]string, len(staticPod.Annotations)+1)
	for k, v := range staticPod.Annotations {
		annotations[k] = v
	}
	annotations[podsource.ConfigMirrorAnnotationKey] = hash
	var labels map[string]string
	if staticPod.Labels != nil {
		labels = make(map[string]string, len(staticPod.Labels))
		for k, v := range staticPod.Labels {
			labels[k] = v
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   staticPod.Namespace,
			Name:        staticPod.Name,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: corev1.SchemeGroupVersion.String(),
				Kind:       "Node",
				Name:       nodeName,
				UID:        nodeUID,
				Controller: ptr.To(true),
			}},
		},
		Spec: *staticPod.Spec.DeepCopy(),
	}
}

// nodeUID reads this Node's UID for the owner reference.
func (c *MirrorClient) nodeUID(ctx context.Context) (types.UID, error) {
	node, err := c.client.CoreV1().Nodes().Get(ctx, c.nodeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get node %q for the owner reference: %w", c.nodeName, err)
	}
	if node.UID == "" {
		return "", errors.New("node " + c.nodeName + " has no UID")
	}
	return node.UID, nil
}

// DeleteMirrorPod deletes a mirror pod at once (grace period 0). With uid, the API server deletes
// it only if it still has that UID, so a newer pod that took the name is left alone. It returns
// whether it deleted the pod: a pod that is not there, or no longer has uid, is (false, nil).
func (c *MirrorClient) DeleteMirrorPod(ctx context.Context, namespace, name string, uid *types.UID) (bool, error) {
	logger := klog.FromContext(ctx)
	opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if uid != nil {
		opts.Preconditions = &metav1.Preconditions{UID: uid}
	}
	err := c.client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
	switch {
	case apierrors.IsNotFound(err):
		logger.V(2).Info("Mirror pod already gone", "pod", klog.KRef(namespace, name))
		return false, nil
	case apierrors.IsConflict(err):
		// The UID precondition failed: the name now belongs to another pod.
		logger.V(2).Info("Mirror pod has another UID now; not deleting it", "pod", klog.KRef(namespace, name), "podUID", ptr.Deref(uid, ""))
		return false, nil
	case err != nil:
		return false, fmt.Errorf("delete mirror pod %s/%s: %w", namespace, name, err)
	}
	logger.V(2).Info("Deleted mirror pod", "pod", klog.KRef(namespace, name))
	return true, nil
}

// MirrorPodMatches tells whether mirror is the up-to-date mirror of static: same namespace and
// name, and its config.mirror annotation equals the static pod's config.hash (upstream
// IsMirrorPodOf). A false answer for a pair with the same name means the mirror is stale.
func MirrorPodMatches(static, mirror *corev1.Pod) bool {
	if static.Namespace != mirror.Namespace || static.Name != mirror.Name {
		return false
	}
	hash, ok := mirror.Annotations[podsource.ConfigMirrorAnnotationKey]
	return ok && hash != "" && hash == static.Annotations[podsource.ConfigHashAnnotationKey]
}

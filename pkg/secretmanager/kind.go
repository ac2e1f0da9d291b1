package secretmanager

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// object is what a store can hold: a typed API object with metadata (*corev1.Secret,
// *corev1.ConfigMap).
type object interface {
	runtime.Object
	metav1.Object
}

// kind tells a generic store how to talk to the API server about one resource. It is the only
// place where Secrets and ConfigMaps differ; every strategy is written once against kind[T].
// Upstream passes the same functions one by one (getSecret, listSecret, watchSecret, newSecret,
// isImmutable in pkg/kubelet/secret/secret_manager.go).
type kind[T object] struct {
	// singular names the kind in our own error messages and logs ("secret").
	singular string
	// resource is the API resource, used for NotFound errors and the Metrics hook ("secrets").
	resource schema.GroupResource

	get   func(ctx context.Context, namespace, name string, opts metav1.GetOptions) (T, error)
	list  func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error)
	watch func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)

	// newObject returns an empty object: the reflector's expected type.
	newObject func() T
	// isImmutable reports `immutable: true`; such an object never changes, so its watch can stop.
	isImmutable func(T) bool

	// journal, if set, is told of every GET and WATCH of an object and of every cache hit.
	journal journal.Recorder
}

// note records what happened to namespace/name ("get", "watch", "cache hit") in the journal.
func (k kind[T]) note(what, namespace, name string) {
	k.journal.Record(what, journal.PodRef{}, map[string]string{"kind": k.singular, "object": namespace + "/" + name})
}

// countFunc is called once per request sent to the API server (Config.Metrics with the kind bound).
type countFunc func(verb string)

func secretKind(client kubernetes.Interface, count countFunc) kind[*corev1.Secret] {
	return kind[*corev1.Secret]{
		singular: "secret",
		resource: corev1.Resource("secrets"),
		get: func(ctx context.Context, namespace, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
			count("get")
			return client.CoreV1().Secrets(namespace).Get(ctx, name, opts)
		},
		list: func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
			count("list")
			return client.CoreV1().Secrets(namespace).List(ctx, opts)
		},
		watch: func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
			count("watch")
			return client.CoreV1().Secrets(namespace).Watch(ctx, opts)
		},
		newObject:   func() *corev1.Secret { return &corev1.Secret{} },
		isImmutable: func(s *corev1.Secret) bool { return ptr.Deref(s.Immutable, false) },
	}
}

func configMapKind(client kubernetes.Interface, count countFunc) kind[*corev1.ConfigMap] {
	return kind[*corev1.ConfigMap]{
		singular: "configmap",
		resource: corev1.Resource("configmaps"),
		get: func(ctx context.Context, namespace, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
			count("get")
			return client.CoreV1().ConfigMaps(namespace).Get(ctx, name, opts)
		},
		list: func(ctx context.Context, namespace string, opts metav1.ListOptions) (runtime.Object, error) {
			count("list")
			return client.CoreV1().ConfigMaps(namespace).List(ctx, opts)
		},
		watch: func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
			count("watch")
			return client.CoreV1().ConfigMaps(namespace).Watch(ctx, opts)
		},
		newObject:   func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
		isImmutable: func(c *corev1.ConfigMap) bool { return ptr.Deref(c.Immutable, false) },
	}
}

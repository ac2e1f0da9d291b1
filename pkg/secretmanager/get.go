package secretmanager

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// getStore is the Get strategy: no state, one GET per Get. Upstream: simpleSecretManager in
// pkg/kubelet/secret/secret_manager.go (and simpleConfigMapManager).
type getStore[T object] struct {
	kind kind[T]
}

var _ objectStore[*corev1.Secret] = getStore[*corev1.Secret]{}

func (getStore[T]) AddReference(string, string, types.UID)    {}
func (getStore[T]) DeleteReference(string, string, types.UID) {}

func (s getStore[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	s.kind.note("get", namespace, name)
	obj, err := s.kind.get(ctx, namespace, name, metav1.GetOptions{})
	if err != nil {
		var zero T
		return zero, fmt.Errorf("get %s %s/%s: %w", s.kind.singular, namespace, name, err)
	}
	return obj, nil
}

package podsource

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// apiserverSource lists and watches the pods bound to this node, in every namespace, and hands
// the full set to merge on every change (upstream pkg/kubelet/config/apiserver.go).
//
// A Reflector keeps an UndeltaStore up to date from LIST+WATCH; the UndeltaStore calls back with
// ALL its objects after each change, which is exactly the "full SET" the merger wants.
type apiserverSource struct {
	client   kubernetes.Interface
	nodeName string
	clock    clock.Clock
	merge    func(ctx context.Context, pods []*corev1.Pod)
}

// run lists and watches until ctx is done; the Reflector re-lists after a broken watch, with backoff.
func (a *apiserverSource) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Watching the API server for pods", "node", a.nodeName)

	selector := fields.OneTermEqualSelector("spec.nodeName", a.nodeName).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return a.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			return a.client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, opts)
		},
	}
	store := cache.NewUndeltaStore(func(objs []any) { a.merge(ctx, podsOnNode(objs, a.nodeName)) }, cache.MetaNamespaceKeyFunc)
	r := cache.NewReflectorWithOptions(
		// Falls back to LIST+WATCH for clients that cannot stream a watch-list (the fake clientset).
		cache.ToListWatcherWithWatchListSemantics(lw, a.client),
		&corev1.Pod{}, store,
		cache.ReflectorOptions{Name: "podsource-apiserver", Clock: a.clock, Logger: &logger},
	)
	r.RunWithContext(ctx)
}

// podsOnNode picks the pods bound to nodeName out of the store's objects. The API server already
// filters by the field selector; this guards against clients that do not (the fake clientset).
// The pods belong to the store: the merger copies them.
func podsOnNode(objs []any, nodeName string) []*corev1.Pod {
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName == nodeName {
			pods = append(pods, pod)
		}
	}
	return pods
}

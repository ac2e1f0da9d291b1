package nodestatus

import (
	"context"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// nodeWatch is the kubelet's informer on its own Node (upstream NewMainKubelet's nodeInformer:
// LIST and WATCH nodes with the field selector metadata.name=<node>). The status loop reads the
// Node from its lister, as upstream's tryUpdateNodeStatus does on its first try, so an idle node
// sends nothing to read it.
//
// A lister alone cannot tell a quiet Node from a broken watch: while the API server is away the
// reflector keeps its last copy and retries the watch with a back-off of up to 30 s. So nodeWatch
// also knows whether a watch is open right now (watching), and cached refuses to answer while
// none is: then the loop GETs, and sees at once what kube-controller-manager wrote meanwhile
// (Ready=Unknown after the outage).
type nodeWatch struct {
	informer cache.SharedIndexInformer
	lister   corelisters.NodeLister
	name     string
	watching atomic.Bool // a WATCH was opened and has not ended since
}

// newNodeWatch makes the informer on node name; nothing runs until run.
func newNodeWatch(client kubernetes.Interface, name string) *nodeWatch {
	w := &nodeWatch{name: name}
	selector := fields.OneTermEqualSelector(metav1.ObjectNameField, name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return client.CoreV1().Nodes().List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			wi, err := client.CoreV1().Nodes().Watch(ctx, opts)
			if err != nil {
				w.watching.Store(false)
				return nil, err
			}
			w.watching.Store(true)
			return &trackedWatch{Interface: wi, watching: &w.watching}, nil
		},
	}
	// As client-go's generated informers do: a client that cannot stream the initial list (the
	// fake clientset in unit tests) is LISTed instead.
	w.informer = cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &corev1.Node{}, 0, cache.Indexers{})
	w.lister = corelisters.NewNodeLister(w.informer.GetIndexer())
	return w
}

// run runs the informer until ctx ends.
func (w *nodeWatch) run(ctx context.Context) { w.informer.RunWithContext(ctx) }

// cached returns the Node from the watch cache, and false when the cache may be behind the API
// server: not synced yet, no watch open now, or the Node not (yet) in it. The caller must not
// modify the Node.
func (w *nodeWatch) cached() (*corev1.Node, bool) {
	if !w.informer.HasSynced() || !w.watching.Load() {
		return nil, false
	}
	node, err := w.lister.Get(w.name)
	if err != nil {
		return nil, false
	}
	return node, true
}

// trackedWatch clears watching when the reflector stops the watch: it always does once the
// watch ends, whether the server closed it, the connection broke or the informer stopped.
type trackedWatch struct {
	watch.Interface
	watching *atomic.Bool
}

func (t *trackedWatch) Stop() {
	t.watching.Store(false)
	t.Interface.Stop()
}

package app

import (
	"context"
	"net"

	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/kubelet"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/version"
)

// run runs one node agent, or the --nodes N agents of this process. It returns nil on a clean
// shutdown (ctx cancelled by SIGINT/SIGTERM).
func run(ctx context.Context, o *options.Options) error {
	if o.Nodes > 1 {
		return runNodes(ctx, o)
	}
	return runNode(ctx, o, nil, nil)
}

// runNode runs one node agent: the Kubelet, whose start order (pkg/kubelet Kubelet.startOrder)
// starts every component. apiListener, when not nil, is where its kubelet API serves (--nodes
// opens one per node); nil listens on --address:--port. shared is what the --nodes agents share;
// nil for a kubelet alone.
func runNode(ctx context.Context, o *options.Options, apiListener net.Listener, shared *kubelet.Shared) error {
	klog.FromContext(ctx).Info("Starting minikubelet", "version", version.Get().Version, "kubernetes", version.Get().Kubernetes, "node", o.NodeName)
	k, err := kubelet.New(kubelet.Config{Options: o, APIListener: apiListener, Shared: shared, FakeRuntime: newFakeRuntime})
	if err != nil {
		return err
	}
	return k.Run(ctx)
}

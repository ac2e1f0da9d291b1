package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/options"
)

// runNodes runs the --nodes N node agents of this process, each one runNode with the options of
// ForNode: its own TLS bootstrap and client certificate (system:node:<name>), Lease, status, pod
// workers and built-in fake runtime with a pod range of its own. Nothing but the process and the
// read-only options are shared, so each agent is exactly the kubelet `minikubelet` runs alone,
// and the API server's NodeRestriction applies to each.
//
// Each node's kubelet API listens on an ephemeral port of --address, published in its
// status.daemonEndpoints, which is where the API server looks for it (kubectl logs, exec).
// The first agent that fails stops all of them and its error, naming the node, is returned: the
// process exits as one kubelet would.
func runNodes(ctx context.Context, o *options.Options) error {
	logger := klog.FromContext(ctx)
	names := o.NodeNames()
	logger.Info("Starting node agents in one process", "nodes", len(names), "first", names[0], "last", names[len(names)-1], "rootDir", o.RootDir)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for i, name := range names {
		node := o.ForNode(i + 1)
		addr := net.JoinHostPort(node.Config.Address, "0")
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			stop(fmt.Errorf("node %s: listen on %s for its kubelet API: %w", name, addr, err))
			break
		}
		node.Config.Port = int32(ln.Addr().(*net.TCPAddr).Port)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { _ = ln.Close() }() // already closed once the API served; not if the agent failed before
			if err := runNode(klog.NewContext(ctx, logger.WithValues("node", name)), node, ln); err != nil {
				stop(fmt.Errorf("node %s: %w", name, err))
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err // an agent failed; a signal (the parent's cancellation) is a clean shutdown
	}
	return nil
}

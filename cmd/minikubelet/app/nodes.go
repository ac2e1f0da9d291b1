package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/kubelet"
	"github.com/minikubelet/minikubelet/pkg/options"
)

// startConcurrency is how many node agents may be between TLS bootstrap and registration at
// once: enough to keep the control plane busy, few enough not to stampede it (a thousand CSRs at
// once time out in kube-controller-manager's queue and are retried).
const startConcurrency = 20

// nodesGCPercent is the garbage collector's target with --nodes (runtime/debug.SetGCPercent).
const nodesGCPercent = 50

// runNodes runs the --nodes N node agents of this process, each one runNode with the options of
// ForNode: its own TLS bootstrap and client certificate (system:node:<name>), Lease, status, pod
// workers and built-in fake runtime with a pod range of its own, so the API server's
// NodeRestriction applies to each. What costs per node without carrying an identity is shared
// (kubelet.Shared): one socket and gRPC server for all the fake runtimes, one Service informer,
// and the start-up's pace, startConcurrency at a time.
//
// Each node's kubelet API listens on an ephemeral port of --address, published in its
// status.daemonEndpoints, which is where the API server looks for it (kubectl logs, exec).
// The first agent that fails stops all of them and its error, naming the node, is returned: the
// process exits as one kubelet would.
func runNodes(ctx context.Context, o *options.Options) error {
	logger := klog.FromContext(ctx)
	names := o.NodeNames()
	logger.Info("Starting node agents in one process", "nodes", len(names), "first", names[0], "last", names[len(names)-1], "rootDir", o.RootDir, "startConcurrency", startConcurrency)
	// Most of a node's memory is long-lived state (clients, informers, goroutine stacks); the
	// collector's default headroom (GOGC=100) lets the heap grow to twice it before collecting.
	// Half that headroom costs some CPU and saves about a fifth of the RSS; GOGC wins if set.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(nodesGCPercent)
		logger.Info("Tuned the garbage collector for many nodes", "gcPercent", nodesGCPercent, "override", "GOGC")
	}
	mux, err := fakeruntime.NewMux(filepath.Join(o.RootDir, "fake-runtime.sock"))
	if err != nil {
		return err
	}
	shared, err := kubelet.NewShared(kubelet.SharedConfig{FakeRuntimes: fakeMux{mux}, Nodes: len(names), StartConcurrency: startConcurrency,
		RuntimeRequestTimeout: o.Config.RuntimeRequestTimeout.Duration})
	if err != nil {
		return err
	}
	// What the nodes share outlives them: it stops after the last one.
	sharedCtx, stopShared := context.WithCancel(klog.NewContext(context.WithoutCancel(ctx), logger.WithName("shared")))
	defer stopShared()
	sharedDone := make(chan error, 1)
	go func() { sharedDone <- shared.Run(sharedCtx) }()
	select {
	case <-shared.Ready():
	case err := <-sharedDone:
		return err
	}

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
			if err := runNode(klog.NewContext(ctx, logger.WithValues("node", name)), node, ln, shared); err != nil {
				stop(fmt.Errorf("node %s: %w", name, err))
			}
		}()
	}
	wg.Wait()
	stopShared()
	if err := <-sharedDone; err != nil {
		logger.Error(err, "Stopping what the node agents share")
	}
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err // an agent failed; a signal (the parent's cancellation) is a clean shutdown
	}
	return nil
}

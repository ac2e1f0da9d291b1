package kubelet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// The container runtime's steps: the built-in fake CRI runtime (fake-runtime) and the CRI
// gRPC connection (cri).

// RuntimeServer is a CRI runtime the kubelet serves in-process: the built-in fake runtime
// (fakeruntime/, a project of its own as containerd is upstream's). The kubelet only serves it
// and dials its endpoint; it never imports a runtime's internals. cmd/minikubelet passes one in.
type RuntimeServer interface {
	// Serve serves CRI on Endpoint until ctx ends.
	Serve(ctx context.Context) error
	// Ready is closed once Endpoint accepts connections.
	Ready() <-chan struct{}
	// Endpoint is the runtime's CRI socket, unix://<path>.
	Endpoint() string
}

// NewRuntimeServer makes the built-in runtime on socket, with pod IPs from podCIDR (Config.FakeRuntime).
type NewRuntimeServer func(socket, podCIDR string) (RuntimeServer, error)

// startFakeRuntime serves the built-in fake CRI runtime in-process on
// <root-dir>/fake-runtime.sock, with pod IPs from podCIDR, unless --container-runtime-endpoint
// names a runtime. The next step waits until its socket is ready.
func (k *Kubelet) startFakeRuntime(ctx context.Context) (component, error) {
	if k.opts.ContainerRuntimeEndpoint != "" {
		return nop()
	}
	var rt RuntimeServer
	var err error
	switch {
	case k.shared != nil: // --nodes: served through the process's one socket (shared.go)
		rt, err = k.shared.cfg.FakeRuntimes.NewRuntime(k.opts.NodeName, k.opts.Config.PodCIDR)
	case k.newFakeRuntime != nil:
		rt, err = k.newFakeRuntime(filepath.Join(k.opts.RootDir, "fake-runtime.sock"), k.opts.Config.PodCIDR)
	default:
		err = errors.New("no --container-runtime-endpoint, and this program has no built-in runtime (kubelet.Config.FakeRuntime)")
	}
	if err != nil {
		return nil, fmt.Errorf("start the built-in fake runtime: %w", err)
	}
	k.runtimeEndpoint = rt.Endpoint()
	klog.FromContext(ctx).Info("Starting the built-in fake CRI runtime", "endpoint", rt.Endpoint())
	return servedRuntime{rt}, nil
}

// servedRuntime is the fake runtime as a step's component: Run serves it, Ready (the runtime's
// own) closes once its socket accepts connections.
type servedRuntime struct{ RuntimeServer }

func (s servedRuntime) Run(ctx context.Context) error { return s.Serve(ctx) }

// dialRuntime connects to the container runtime over CRI gRPC; the connection closes when the
// kubelet stops, after every step that uses it.
func (k *Kubelet) dialRuntime(ctx context.Context) (component, error) {
	endpoint := k.opts.ContainerRuntimeEndpoint
	if endpoint == "" {
		endpoint = k.runtimeEndpoint
	}
	var cri *remote.Client
	var err error
	if k.shared != nil && k.opts.ContainerRuntimeEndpoint == "" { // --nodes: one connection, calls named by node
		cri, err = remote.ForNode(ctx, k.shared.cri, endpoint, k.shared.cfg.FakeRuntimes.NodeKey(), k.opts.NodeName)
	} else {
		cri, err = remote.Dial(ctx, endpoint, k.opts.Config.RuntimeRequestTimeout.Duration)
	}
	if err != nil {
		return nil, err
	}
	k.cri = cri
	return onStop(cri.Close), nil
}

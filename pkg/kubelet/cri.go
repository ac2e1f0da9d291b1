package kubelet

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/cri/fake"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// The container runtime's steps: the built-in fake CRI runtime (fake-runtime) and the CRI
// gRPC connection (cri).

// startFakeRuntime serves the built-in fake CRI runtime in-process on
// <root-dir>/fake-runtime.sock, with pod IPs from podCIDR, unless --container-runtime-endpoint
// names a runtime. The next step waits until its socket is ready.
func (k *Kubelet) startFakeRuntime(ctx context.Context) (component, error) {
	if k.opts.ContainerRuntimeEndpoint != "" {
		return nop()
	}
	var rt *fake.Runtime
	var err error
	if k.shared != nil { // --nodes: served through the process's one socket (shared.go)
		rt, err = k.shared.fakeRuntimes.NewRuntime(k.opts.NodeName, fake.Config{PodCIDR: k.opts.Config.PodCIDR})
	} else {
		rt, err = fake.New(fake.Config{Socket: filepath.Join(k.opts.RootDir, "fake-runtime.sock"), PodCIDR: k.opts.Config.PodCIDR})
	}
	if err != nil {
		return nil, fmt.Errorf("start the built-in fake runtime: %w", err)
	}
	k.runtimeEndpoint = rt.Endpoint()
	klog.FromContext(ctx).Info("Starting the built-in fake CRI runtime", "endpoint", rt.Endpoint())
	return servedRuntime{rt}, nil
}

// servedRuntime is the fake runtime as a step's component: Run serves it, Ready (the fake's own)
// closes once its socket accepts connections.
type servedRuntime struct{ *fake.Runtime }

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
		cri, err = remote.ForNode(ctx, k.shared.cri, endpoint, fake.NodeMetadataKey, k.opts.NodeName)
	} else {
		cri, err = remote.Dial(ctx, endpoint, k.opts.Config.RuntimeRequestTimeout.Duration)
	}
	if err != nil {
		return nil, err
	}
	k.cri = cri
	return onStop(cri.Close), nil
}

package kubelet

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/pkg/cri/fake"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/nodestatus"
)

// RuntimeReadinessCheck is the node readiness check on the container runtime: its Status call
// must answer, with RuntimeReady and NetworkReady true (upstream: kubelet.go updateRuntimeUp and
// runtime_state.go, which put "container runtime is down" / "container runtime network not ready"
// in the Ready condition's message).
func RuntimeReadinessCheck(rs runtimeapi.RuntimeServiceClient, timeout time.Duration) nodestatus.ReadinessCheck {
	return nodestatus.ReadinessCheck{
		Name: "container runtime",
		Check: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			resp, err := rs.Status(ctx, &runtimeapi.StatusRequest{})
			if err != nil {
				return fmt.Errorf("container runtime is down: %w", err)
			}
			return runtimeConditionsError(resp.GetStatus())
		},
	}
}

// runtimeConditionsError returns why a runtime status is not ready, or nil.
func runtimeConditionsError(st *runtimeapi.RuntimeStatus) error {
	seen := map[string]bool{}
	for _, c := range st.GetConditions() {
		seen[c.GetType()] = true
		if c.GetStatus() {
			continue
		}
		switch c.GetType() {
		case runtimeapi.RuntimeReady:
			return fmt.Errorf("container runtime not ready: RuntimeReady=false reason:%s message:%s", c.GetReason(), c.GetMessage())
		case runtimeapi.NetworkReady:
			return fmt.Errorf("container runtime network not ready: NetworkReady=false reason:%s message:%s", c.GetReason(), c.GetMessage())
		}
	}
	if !seen[runtimeapi.RuntimeReady] {
		return fmt.Errorf("container runtime did not report a %s condition", runtimeapi.RuntimeReady)
	}
	return nil
}

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

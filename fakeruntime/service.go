package fakeruntime

import (
	"context"
	"encoding/json"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// Version is the CRI handshake: the kubelet refuses runtimes that do not answer "v1".
func (r *Runtime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           "0.1.0",
		RuntimeName:       RuntimeName,
		RuntimeVersion:    RuntimeVersion,
		RuntimeApiVersion: RuntimeAPIVersion,
	}, nil
}

// Status reports the RuntimeReady and NetworkReady conditions the kubelet turns into the node's
// Ready condition. With verbose, Info holds the configuration and active faults as JSON.
func (r *Runtime) Status(_ context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	runtimeReady := &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: true}
	if r.faults.runtimeDown != nil {
		runtimeReady = proto.Clone(r.faults.runtimeDown).(*runtimeapi.RuntimeCondition)
	}
	resp := &runtimeapi.StatusResponse{
		Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
			runtimeReady,
			{Type: runtimeapi.NetworkReady, Status: true},
		}},
		RuntimeHandlers: []*runtimeapi.RuntimeHandler{{Name: "", Features: &runtimeapi.RuntimeHandlerFeatures{}}},
		Features:        &runtimeapi.RuntimeFeatures{},
	}
	if req.GetVerbose() {
		info := map[string]any{
			"runtimeName":  RuntimeName,
			"podCIDR":      r.podCIDR.String(),
			"logRoot":      r.cfg.LogRoot,
			"streamingURL": r.streamURL,
			"sandboxes":    len(r.sandboxes),
			"containers":   len(r.containers),
			"images":       len(r.images),
			"faults":       r.faults.describe(),
		}
		if r.netConfig != nil {
			info["kubeletPodCIDR"] = r.netConfig.GetNetworkConfig().GetPodCidr()
		}
		resp.Info = infoJSON("config", info)
	}
	return resp, nil
}

// infoJSON is the Info map of a verbose status call: {key: v as JSON}. Our v holds only strings,
// numbers and maps and slices of them, which always encode.
func infoJSON(key string, v any) map[string]string {
	data, _ := json.Marshal(v)
	return map[string]string{key: string(data)}
}

// UpdateRuntimeConfig records the pod CIDR the kubelet sends; IPs still come from Config.PodCIDR.
func (r *Runtime) UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.GetRuntimeConfig() != nil {
		r.netConfig = proto.Clone(req.GetRuntimeConfig()).(*runtimeapi.RuntimeConfig)
		klog.FromContext(ctx).V(2).Info("Runtime config updated", "podCIDR", r.netConfig.GetNetworkConfig().GetPodCidr())
	}
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// RuntimeConfig tells the kubelet which cgroup driver to use (KubeletCgroupDriverFromCRI).
func (r *Runtime) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{
		CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD,
	}}, nil
}

// ListMetricDescriptors returns no CRI metrics: the kubelet then uses the CRI stats calls.
func (r *Runtime) ListMetricDescriptors(context.Context, *runtimeapi.ListMetricDescriptorsRequest) (*runtimeapi.ListMetricDescriptorsResponse, error) {
	return &runtimeapi.ListMetricDescriptorsResponse{}, nil
}

// ListPodSandboxMetrics returns no CRI metrics.
func (r *Runtime) ListPodSandboxMetrics(context.Context, *runtimeapi.ListPodSandboxMetricsRequest) (*runtimeapi.ListPodSandboxMetricsResponse, error) {
	return &runtimeapi.ListPodSandboxMetricsResponse{}, nil
}

// UpdatePodSandboxResources accepts and ignores new pod-level resources.
func (r *Runtime) UpdatePodSandboxResources(_ context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.sandboxLocked(req.GetPodSandboxId()); err != nil {
		return nil, err
	}
	return &runtimeapi.UpdatePodSandboxResourcesResponse{}, nil
}

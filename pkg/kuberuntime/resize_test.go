package kuberuntime

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Upstream computePodResizeAction: a running container whose cpu or memory changed is updated in
// place (resizePolicy NotRequired) or restarted (RestartContainer for a resource that changed,
// "Container app resize requires restart"); a runtime that reports no resources is not resized.
func TestComputePodActionsResize(t *testing.T) {
	limits := func(cpu, mem string) corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
		return corev1.ResourceRequirements{Requests: l, Limits: l}
	}
	ready := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_READY, "10.88.0.2")
	tests := []struct {
		name       string
		cpu, mem   string
		memPolicy  corev1.ResourceResizeRestartPolicy
		noReported bool
		wantUpdate []int
		wantKill   string
	}{
		{"unchanged", "100m", "64Mi", "", false, nil, ""},
		{"cpu up, NotRequired", "200m", "64Mi", "", false, []int{0}, ""},
		{"memory up, NotRequired", "100m", "128Mi", corev1.NotRequired, false, []int{0}, ""},
		{"memory up, RestartContainer", "100m", "128Mi", corev1.RestartContainer, false, nil, "Container app resize requires restart, will be restarted"},
		{"cpu up, memory's policy RestartContainer", "200m", "64Mi", corev1.RestartContainer, false, []int{0}, ""},
		{"runtime reports nothing", "200m", "128Mi", "", true, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(corev1.RestartPolicyAlways, "app")
			pod.Spec.Containers[0].Resources = limits("100m", "64Mi")
			cs := running(pod, 0, "c1")
			if !tc.noReported {
				cs.Resources = containerResources(pod, &pod.Spec.Containers[0], 0, false) // what the runtime applied
			}
			pod.Spec.Containers[0].Resources = limits(tc.cpu, tc.mem)
			if tc.memPolicy != "" {
				pod.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: tc.memPolicy}}
			}
			status := &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{cs}}
			got := computePodActions(pod, status, noProbes{})
			if !reflect.DeepEqual(got.ContainersToUpdate, tc.wantUpdate) {
				t.Errorf("ContainersToUpdate = %v, want %v", got.ContainersToUpdate, tc.wantUpdate)
			}
			if tc.wantKill == "" {
				if len(got.ContainersToKill) != 0 || len(got.ContainersToStart) != 0 {
					t.Errorf("killed %v / started %v, want neither", got.ContainersToKill, got.ContainersToStart)
				}
				return
			}
			if got.ContainersToKill["c1"].Message != tc.wantKill || !reflect.DeepEqual(got.ContainersToStart, []int{0}) {
				t.Errorf("kill %v start %v, want %q and a start", got.ContainersToKill, got.ContainersToStart, tc.wantKill)
			}
		})
	}
}

// failingUpdates is a runtime whose UpdateContainerResources fails for the container IDs in
// fail and records the others; every other call panics (the embedded nil interface).
type failingUpdates struct {
	runtimeapi.RuntimeServiceClient
	fail    map[string]bool
	updated []string
}

func (f *failingUpdates) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest, _ ...grpc.CallOption) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	if f.fail[req.ContainerId] {
		return nil, status.Error(codes.Unknown, "cannot set memory limit below usage")
	}
	f.updated = append(f.updated, req.ContainerId)
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// Upstream doPodResizeAction: the updates go in order and the first failure stops them; the
// result carries the runtime's message (the kubelet's PodResizeInProgress reason Error) and the
// sync's error says ResizePodInPlaceError.
func TestUpdateForSyncStopsAtFirstFailure(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}}}}
	ps := &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{{ID: "ida", Name: "a"}, {ID: "idb", Name: "b"}, {ID: "idc", Name: "c"}}}
	rt := &failingUpdates{fail: map[string]bool{"idb": true}}
	m := &Manager{runtime: rt}
	result := SyncResult{ContainerErrors: map[string]ContainerError{}}
	m.updateForSync(ctx, pod, ps, PodActions{ContainersToUpdate: []int{0, 1, 2}}, &result)
	if len(rt.updated) != 1 || rt.updated[0] != "ida" {
		t.Errorf("updated %v, want only ida (before the failure)", rt.updated)
	}
	if !strings.Contains(result.ResizeError, "cannot set memory limit below usage") || !result.Resized {
		t.Errorf("ResizeError %q Resized %v, want the runtime's message and the first update counted", result.ResizeError, result.Resized)
	}
	if err := result.Err(); err == nil || !strings.HasPrefix(err.Error(), ErrResizePodInPlace+": ") {
		t.Errorf("Err() = %v, want it to start with %s", err, ErrResizePodInPlace)
	}
}

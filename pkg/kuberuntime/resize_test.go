package kuberuntime

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

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

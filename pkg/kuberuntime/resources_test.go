package kuberuntime

import (
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func resources(requests, limits map[corev1.ResourceName]string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for n, v := range requests {
		r.Requests[n] = resource.MustParse(v)
	}
	for n, v := range limits {
		r.Limits[n] = resource.MustParse(v)
	}
	return r
}

// Upstream generateLinuxContainerResources / calculateLinuxResources with the defaults
// (cpuCFSQuota on, 100 ms period, no swap or MemoryQoS), on a node of 4000000000 bytes: shares
// from the request (or the limit), quota from the limit, the memory limit, oom_score_adj by
// QoS; memory.oom.group on cgroup v2.
func TestContainerResources(t *testing.T) {
	const capacity = 4000000000
	cpu, mem := corev1.ResourceCPU, corev1.ResourceMemory
	tests := []struct {
		name     string
		res      corev1.ResourceRequirements
		podLevel *corev1.ResourceRequirements
		cgroupV2 bool
		want     *runtimeapi.LinuxContainerResources
	}{
		{"best effort", resources(nil, nil), nil, false,
			&runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, OomScoreAdj: 1000}},
		{"guaranteed", resources(map[corev1.ResourceName]string{cpu: "500m", mem: "128Mi"}, map[corev1.ResourceName]string{cpu: "500m", mem: "128Mi"}), nil, false,
			&runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 134217728, OomScoreAdj: -997}},
		{"burstable with a memory limit", resources(map[corev1.ResourceName]string{cpu: "100m", mem: "1G"}, map[corev1.ResourceName]string{mem: "2G"}), nil, false,
			&runtimeapi.LinuxContainerResources{CpuShares: 102, CpuPeriod: 100000, MemoryLimitInBytes: 2000000000, OomScoreAdj: 750}},
		{"cpu limit without a request: shares from the limit", resources(nil, map[corev1.ResourceName]string{cpu: "2"}), nil, false,
			&runtimeapi.LinuxContainerResources{CpuShares: 2048, CpuPeriod: 100000, CpuQuota: 200000, OomScoreAdj: 999}},
		{"cgroup v2: the whole container is OOM-killed", resources(nil, map[corev1.ResourceName]string{mem: "64Mi"}), nil, true,
			&runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, MemoryLimitInBytes: 67108864, OomScoreAdj: 999,
				Unified: map[string]string{"memory.oom.group": "1"}}},
		{"pod-level limits when the container has none (and shares from the cpu limit)", resources(nil, nil),
			&corev1.ResourceRequirements{Limits: corev1.ResourceList{cpu: resource.MustParse("1"), mem: resource.MustParse("1G")}}, false,
			&runtimeapi.LinuxContainerResources{CpuShares: 1024, CpuPeriod: 100000, CpuQuota: 100000, MemoryLimitInBytes: 1000000000, OomScoreAdj: 999}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u"},
				Spec: corev1.PodSpec{Resources: tc.podLevel, Containers: []corev1.Container{{Name: "app", Resources: tc.res}}}}
			got := containerResources(pod, &pod.Spec.Containers[0], capacity, tc.cgroupV2)
			if !proto.Equal(got, tc.want) {
				t.Errorf("containerResources =\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
}

// The sandbox's cgroup parent follows the QoS class the API server stored (upstream
// GetPodCgroupParent).
func TestSandboxCgroupParent(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "1234"},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}}
	m := &Manager{podLogsDir: "/logs", memoryCapacity: 1 << 30}
	if got := mustSandboxConfig(t, m, pod).GetLinux().GetCgroupParent(); got != "/kubepods/burstable/pod1234" {
		t.Errorf("CgroupParent = %q, want /kubepods/burstable/pod1234", got)
	}
	pod.Status.QOSClass = ""
	if got := mustSandboxConfig(t, m, pod).GetLinux().GetCgroupParent(); got != "/kubepods/besteffort/pod1234" {
		t.Errorf("CgroupParent without a stored class = %q, want the computed BestEffort one", got)
	}
}

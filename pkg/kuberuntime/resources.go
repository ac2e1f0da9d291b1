package kuberuntime

// A container's requests and limits in CRI terms, and the cgroup its pod lives in (upstream:
// kuberuntime_container_linux.go generateLinuxContainerResources, calculateLinuxResources,
// getCPULimit, getMemoryLimit; kuberuntime_sandbox.go generatePodSandboxConfig's CgroupParent).

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/cm"
	"github.com/minikubelet/minikubelet/pkg/qos"
)

// containerResources is the LinuxContainerResources of container c of pod on a node with
// memoryCapacity bytes of memory:
//
//	cpu_shares      cm.MilliCPUToShares(cpu request), or of the cpu limit when only that is set
//	cpu_period      100000 µs (cpuCFSQuota is always on)
//	cpu_quota       cm.MilliCPUToQuota(cpu limit), 0 (unlimited) without one
//	memory_limit    the memory limit in bytes, 0 (none) without one
//	oom_score_adj   by QoS class (qos.ContainerOOMScoreAdjust)
//	unified         memory.oom.group=1 on cgroup v2: an OOM kills the whole container, as
//	                upstream's default singleProcessOOMKill false there
//
// A container without its own cpu or memory limit takes the pod-level one (spec.resources).
// No hugepage or swap settings (the runtime's defaults: containerd 1.6 sets the swap limit to
// the memory limit itself where the swap controller exists). Pure.
func containerResources(pod *corev1.Pod, c *corev1.Container, memoryCapacity int64, cgroupV2 bool) *runtimeapi.LinuxContainerResources {
	cpuLimit, memoryLimit := containerLimit(pod, c, corev1.ResourceCPU), containerLimit(pod, c, corev1.ResourceMemory)
	r := &runtimeapi.LinuxContainerResources{CpuPeriod: cm.QuotaPeriod}
	// Without a request, the limit gives the shares: the API server defaults a request to the
	// limit for new pods, and the kubelet does the same for pods made before it did.
	if request, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		r.CpuShares = cm.MilliCPUToShares(request.MilliValue())
	} else {
		r.CpuShares = cm.MilliCPUToShares(cpuLimit.MilliValue())
	}
	r.CpuQuota = cm.MilliCPUToQuota(cpuLimit.MilliValue(), cm.QuotaPeriod)
	r.MemoryLimitInBytes = memoryLimit.Value()
	r.OomScoreAdj = int64(qos.ContainerOOMScoreAdjust(pod, c, memoryCapacity))
	if cgroupV2 {
		r.Unified = map[string]string{"memory.oom.group": "1"}
	}
	return r
}

// containerLimit is c's limit of resource name, or, when c sets none and the pod sets
// pod-level resources, the pod's limit of it (0 when neither does).
func containerLimit(pod *corev1.Pod, c *corev1.Container, name corev1.ResourceName) resource.Quantity {
	if q, ok := c.Resources.Limits[name]; ok && !q.IsZero() {
		return q
	}
	if cm.IsPodLevelResourcesSet(pod) {
		return pod.Spec.Resources.Limits[name]
	}
	return c.Resources.Limits[name]
}

// podCgroupParent is the CgroupParent of the pod's sandbox: /kubepods[/burstable|/besteffort]/pod<uid>,
// by the pod's QoS class (upstream GetPodCgroupParent). The runtime creates it with the first
// container; runc puts every container's cgroup below it.
func podCgroupParent(pod *corev1.Pod) string {
	return cm.PodCgroupParent(pod.UID, qos.GetPodQOS(pod))
}

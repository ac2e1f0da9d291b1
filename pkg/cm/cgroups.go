package cm

// A container's cpu in cgroup terms, and the cgroup a pod lives in (upstream:
// pkg/kubelet/cm/helpers_linux.go MilliCPUToShares, MilliCPUToQuota, GetPodCgroupNameSuffix;
// pod_container_manager_linux.go GetPodContainerName; qos_container_manager_linux.go and
// node_container_manager_linux.go for the kubepods hierarchy; cgroup_manager_linux.go Name for
// the cgroupfs spelling).

import (
	"path"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The kernel's limits and units (upstream helpers_linux.go).
const (
	MinShares     = 2      // cpu.shares of a container that requests no cpu
	MaxShares     = 262144 // the kernel's maximum
	SharesPerCPU  = 1024
	MilliCPUToCPU = 1000
	// QuotaPeriod is cpu.cfs_period_us, 100 ms; MinQuotaPeriod the smallest quota, 1 ms.
	QuotaPeriod    = 100000
	MinQuotaPeriod = 1000
)

// MilliCPUToShares converts a cpu request in millicores to cpu.shares: 1024 per cpu, within
// 2 … 262144; no request is 2, the kernel's smallest, not its default 1024. Pure.
func MilliCPUToShares(milliCPU int64) int64 {
	if milliCPU == 0 {
		return MinShares
	}
	shares := milliCPU * SharesPerCPU / MilliCPUToCPU
	return min(max(shares, MinShares), MaxShares)
}

// MilliCPUToQuota converts a cpu limit in millicores to the CFS quota per period (both in µs):
// 500m over 100 ms is 50 ms. No limit is 0 (unlimited); a quota is at least 1 ms. Pure.
func MilliCPUToQuota(milliCPU, period int64) int64 {
	if milliCPU == 0 {
		return 0
	}
	return max(milliCPU*period/MilliCPUToCPU, MinQuotaPeriod)
}

// kubepodsCgroup is the root of the pods' cgroups (upstream defaultNodeAllocatableCgroupName
// under cgroupRoot "/", with cgroupsPerQOS).
const kubepodsCgroup = "/kubepods"

// PodCgroupParent is the cgroupfs path of the pod's cgroup, the CgroupParent of its sandbox:
//
//	Guaranteed  /kubepods/pod<uid>
//	Burstable   /kubepods/burstable/pod<uid>
//	BestEffort  /kubepods/besteffort/pod<uid>
//
// The runtime puts each container's cgroup below it (containerd: <parent>/<container id>).
// Pure.
func PodCgroupParent(uid types.UID, class corev1.PodQOSClass) string {
	pod := "pod" + string(uid)
	switch class {
	case corev1.PodQOSBurstable:
		return path.Join(kubepodsCgroup, "burstable", pod)
	case corev1.PodQOSBestEffort:
		return path.Join(kubepodsCgroup, "besteffort", pod)
	default:
		return path.Join(kubepodsCgroup, pod)
	}
}

// IsCgroup2UnifiedMode tells whether /sys/fs/cgroup is cgroup v2 alone (upstream
// libcontainer's IsCgroup2UnifiedMode). It reads the filesystem: call it once.
func IsCgroup2UnifiedMode() bool {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		return false
	}
	return st.Type == unix.CGROUP2_SUPER_MAGIC
}

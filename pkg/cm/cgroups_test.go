package cm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream helpers_linux.go: 1024 shares per cpu within 2 … 262144; quota = limit × period,
// at least 1 ms; no limit is no quota.
func TestMilliCPUToSharesAndQuota(t *testing.T) {
	tests := []struct {
		milliCPU         int64
		shares, quota100 int64
	}{
		{0, 2, 0},
		{1, 2, 1000}, // 1m: 1 share is below the kernel's minimum; 1 µs below the 1 ms quota
		{5, 5, 1000},
		{100, 102, 10000},
		{250, 256, 25000},
		{1000, 1024, 100000},
		{1500, 1536, 150000},
		{256000, 262144, 25600000},
		{300000, 262144, 30000000},
	}
	for _, tc := range tests {
		if got := MilliCPUToShares(tc.milliCPU); got != tc.shares {
			t.Errorf("MilliCPUToShares(%d) = %d, want %d", tc.milliCPU, got, tc.shares)
		}
		if got := MilliCPUToQuota(tc.milliCPU, QuotaPeriod); got != tc.quota100 {
			t.Errorf("MilliCPUToQuota(%d, 100000) = %d, want %d", tc.milliCPU, got, tc.quota100)
		}
	}
}

// Upstream GetPodContainerName with the cgroupfs driver: Guaranteed pods sit right under
// /kubepods, the others under their QoS class's cgroup.
func TestPodCgroupParent(t *testing.T) {
	for class, want := range map[corev1.PodQOSClass]string{
		corev1.PodQOSGuaranteed: "/kubepods/pod0f1e",
		corev1.PodQOSBurstable:  "/kubepods/burstable/pod0f1e",
		corev1.PodQOSBestEffort: "/kubepods/besteffort/pod0f1e",
	} {
		if got := PodCgroupParent("0f1e", class); got != want {
			t.Errorf("PodCgroupParent(%s) = %q, want %q", class, got, want)
		}
	}
}

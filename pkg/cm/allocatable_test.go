package cm

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Upstream GetNodeAllocatableReservation: per resource of capacity, system + kube reserved +
// the hard eviction threshold (memory.available → memory, nodefs.available →
// ephemeral-storage, a percentage of the capacity); other signals reserve nothing.
func TestNodeAllocatableReservation(t *testing.T) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1000Mi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	thresholds, err := ParseEvictionHard(map[string]string{"memory.available": "100Mi", "nodefs.available": "50%",
		"imagefs.available": "15%", "nodefs.inodesFree": "5%", "pid.available": "0%"})
	if err != nil {
		t.Fatal(err)
	}
	if len(thresholds) != 4 {
		t.Errorf("thresholds %+v: want 4 (0%% means none)", thresholds)
	}
	got := NodeAllocatableReservation(capacity, NodeConfig{
		KubeReserved:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
		SystemReserved:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("150m"), "pid": resource.MustParse("100")},
		HardEvictionThresholds: thresholds,
	})
	want := map[corev1.ResourceName]string{"cpu": "250m", "memory": "200Mi", "ephemeral-storage": "500Mi"}
	if len(got) != len(want) {
		t.Errorf("reservation %v, want only %v (nothing for pods or pid)", got, want)
	}
	for name, w := range want {
		if q := got[name]; q.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("reserved %s = %s, want %s", name, q.String(), w)
		}
	}
	if err := ValidateNodeAllocatable(capacity, got); err != nil {
		t.Errorf("ValidateNodeAllocatable: %v", err)
	}
	if err := ValidateNodeAllocatable(capacity, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}); err == nil || !strings.Contains(err.Error(), "cpu: 3 reserved") {
		t.Errorf("3 cpu reserved of 2: error %v", err)
	}
}

// Upstream parseResourceList and parseThresholdStatement refuse what they cannot use; the
// errors name the entry and say what to write.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		reserved, eviction map[string]string
		want               string
	}{
		{reserved: map[string]string{"cpu": "1x"}, want: `cpu="1x" is not a quantity`},
		{reserved: map[string]string{"memory": "-5Mi"}, want: "negative"},
		{reserved: map[string]string{"nvidia.com/gpu": "1"}, want: `cannot reserve "nvidia.com/gpu"`},
		{eviction: map[string]string{"memory.avail": "1Gi"}, want: `unsupported eviction signal "memory.avail"`},
		{eviction: map[string]string{"nodefs.available": "-1%"}, want: "within 0% and 100%"},
		{eviction: map[string]string{"nodefs.available": "ten%"}, want: "not a percentage"},
		{eviction: map[string]string{"memory.available": "-1Mi"}, want: "must be positive"},
	} {
		var err error
		if tc.reserved != nil {
			_, err = ParseReserved(tc.reserved)
		} else {
			_, err = ParseEvictionHard(tc.eviction)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse %v%v: error %v, want %q", tc.reserved, tc.eviction, err, tc.want)
		}
	}
}

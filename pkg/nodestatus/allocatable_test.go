package nodestatus

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// Upstream setters.go MachineInfo + GetNodeAllocatableReservation: allocatable = capacity −
// kubeReserved − systemReserved − the memory.available / nodefs.available hard eviction
// thresholds (a percentage of the capacity), for the resources the node has; pods = maxPods.
func TestNodeResources(t *testing.T) {
	// 90 % of 100Gi, computed as upstream does: the 10 % is a float32, a little more than 0.1.
	const nodefs90 = "96636764000"
	defaults, err := cm.ParseEvictionHard(cm.DefaultEvictionHard())
	if err != nil {
		t.Fatal(err)
	}
	machine := Machine{Capacity: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}}
	noDisk := Machine{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}}
	tests := []struct {
		name      string
		machine   Machine
		overrides corev1.ResourceList
		reserved  cm.NodeConfig
		want      map[corev1.ResourceName]string // allocatable
	}{
		{"nothing reserved", machine, nil, cm.NodeConfig{},
			map[corev1.ResourceName]string{"cpu": "4", "memory": "8Gi", "ephemeral-storage": "100Gi", "pods": "110"}},
		{"default evictionHard", machine, nil, cm.NodeConfig{HardEvictionThresholds: defaults},
			map[corev1.ResourceName]string{"cpu": "4", "memory": "8092Mi", "ephemeral-storage": nodefs90, "pods": "110"}},
		{"kube and system reserved", machine, nil, cm.NodeConfig{
			KubeReserved:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			SystemReserved:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "pid": resource.MustParse("1000")},
			HardEvictionThresholds: defaults},
			map[corev1.ResourceName]string{"cpu": "2900m", "memory": "7836Mi", "ephemeral-storage": nodefs90, "pods": "110"}},
		{"no disk: nodefs reserves nothing", noDisk, nil, cm.NodeConfig{HardEvictionThresholds: defaults},
			map[corev1.ResourceName]string{"cpu": "2", "memory": "924Mi", "pods": "110"}},
		{"--node-capacity overrides", machine, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourcePods: resource.MustParse("30")},
			cm.NodeConfig{HardEvictionThresholds: defaults},
			map[corev1.ResourceName]string{"cpu": "16", "memory": "8092Mi", "ephemeral-storage": nodefs90, "pods": "30"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			capacity, allocatable, err := NodeResources(tc.machine, tc.overrides, 110, tc.reserved)
			if err != nil {
				t.Fatal(err)
			}
			if len(allocatable) != len(tc.want) || len(capacity) != len(tc.want) {
				t.Errorf("capacity %v, allocatable %v: want the resources %v", capacity, allocatable, tc.want)
			}
			for name, want := range tc.want {
				got := allocatable[name]
				if got.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("allocatable %s = %s, want %s", name, got.String(), want)
				}
			}
		})
	}
}

// Upstream validateNodeAllocatable: reserving more than the capacity stops the kubelet, with
// the resource and both amounts in the message.
func TestNodeResourcesRefusesReservationAboveCapacity(t *testing.T) {
	machine := Machine{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}}
	_, _, err := NodeResources(machine, nil, 110, cm.NodeConfig{KubeReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}})
	if err == nil || !strings.Contains(err.Error(), "memory: 2Gi reserved") || !strings.Contains(err.Error(), "capacity is 1Gi") {
		t.Errorf("error = %v, want memory's reservation and capacity named", err)
	}
}

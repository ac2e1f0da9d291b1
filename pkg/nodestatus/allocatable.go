package nodestatus

// The node's capacity and allocatable (upstream: pkg/kubelet/nodestatus/setters.go MachineInfo,
// with the reservation of pkg/kubelet/cm GetNodeAllocatableReservation).

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// NodeResources is what the node reports: its capacity — the machine's, with the
// --node-capacity overrides, and pods = maxPods unless overridden — and its allocatable, the
// capacity less what is reserved (kubeReserved, systemReserved, the memory.available and
// nodefs.available hard eviction thresholds), never below 0. A reservation larger than its
// capacity is an error, as upstream's container manager refuses to start. The kubelet's
// admission and the downward API's default limits use the same allocatable. Pure.
func NodeResources(machine Machine, overrides corev1.ResourceList, maxPods int32, reserved cm.NodeConfig) (capacity, allocatable corev1.ResourceList, err error) {
	capacity = machine.Capacity.DeepCopy()
	if capacity == nil {
		capacity = corev1.ResourceList{}
	}
	for name, q := range overrides {
		capacity[name] = q.DeepCopy()
	}
	if _, ok := overrides[corev1.ResourcePods]; !ok {
		capacity[corev1.ResourcePods] = *resource.NewQuantity(int64(maxPods), resource.DecimalSI)
	}
	reservation := cm.NodeAllocatableReservation(capacity, reserved)
	if err := cm.ValidateNodeAllocatable(capacity, reservation); err != nil {
		return nil, nil, err
	}
	allocatable = corev1.ResourceList{}
	for name, q := range capacity {
		value := q.DeepCopy()
		if r, ok := reservation[name]; ok {
			value.Sub(r)
		}
		if value.Sign() < 0 {
			value.Set(0)
		}
		allocatable[name] = value
	}
	return capacity, allocatable, nil
}

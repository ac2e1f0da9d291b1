package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// requesting is a pod whose one container requests the given resources ("cpu", "500m", …).
func requesting(uid string, kv ...string) *corev1.Pod {
	req := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		req[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "default", UID: types.UID(uid)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: req}}}}}
}

// Upstream's general predicates as the kubelet runs them (lifecycle/predicate.go,
// noderesources fitsRequest): pods first, then cpu, memory, ephemeral-storage and the scalar
// resources; the reason OutOf<resource> and the InsufficientResourceError message, with cpu in
// millicores and the rest in bytes or units.
func TestAdmitResources(t *testing.T) {
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1900m"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Gi"), corev1.ResourcePods: resource.MustParse("3"),
		"example.com/gpu": resource.MustParse("1"),
	}
	besteffort := requesting("be")
	small := requesting("small", "cpu", "100m", "memory", "100Mi")
	tests := []struct {
		name       string
		pod        *corev1.Pod
		others     []*corev1.Pod
		wantReason string
		wantMsg    string
	}{
		{"best effort fits", besteffort, []*corev1.Pod{small}, "", ""},
		{"fits exactly", requesting("p", "cpu", "1800m", "memory", "924Mi"), []*corev1.Pod{small}, "", ""},
		{"cpu above allocatable", requesting("p", "cpu", "5"), []*corev1.Pod{small}, "OutOfcpu",
			"Node didn't have enough resource: cpu, requested: 5000, used: 100, capacity: 1900"},
		{"cpu above what is left", requesting("p", "cpu", "1801m"), []*corev1.Pod{small}, "OutOfcpu",
			"Node didn't have enough resource: cpu, requested: 1801, used: 100, capacity: 1900"},
		{"memory", requesting("p", "memory", "1000Mi"), []*corev1.Pod{small}, "OutOfmemory",
			"Node didn't have enough resource: memory, requested: 1048576000, used: 104857600, capacity: 1073741824"},
		{"cpu before memory", requesting("p", "cpu", "2", "memory", "2Gi"), nil, "OutOfcpu",
			"Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1900"},
		{"ephemeral storage", requesting("p", "ephemeral-storage", "11Gi"), nil, "OutOfephemeral-storage",
			"Node didn't have enough resource: ephemeral-storage, requested: 11811160064, used: 0, capacity: 10737418240"},
		{"pods before cpu", requesting("p", "cpu", "5"), []*corev1.Pod{small, besteffort, requesting("x")}, "OutOfpods",
			"Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3"},
		{"the third pod fits", besteffort, []*corev1.Pod{small, requesting("x")}, "", ""},
		{"extended resource the node has", requesting("p", "example.com/gpu", "2"), nil, "OutOfexample.com/gpu",
			"Node didn't have enough resource: example.com/gpu, requested: 2, used: 0, capacity: 1"},
		{"extended resource the node lacks is not checked", requesting("p", "example.org/fpga", "1"), nil, "", ""},
		{"hugepages the node lacks", requesting("p", "hugepages-2Mi", "2Mi"), nil, "OutOfhugepages-2Mi",
			"Node didn't have enough resource: hugepages-2Mi, requested: 2097152, used: 0, capacity: 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := admitResources(tc.pod, tc.others, allocatable)
			if got.admit != (tc.wantReason == "") || got.reason != tc.wantReason || got.message != tc.wantMsg {
				t.Errorf("admitResources = %+v, want reason %q message %q", got, tc.wantReason, tc.wantMsg)
			}
		})
	}
}

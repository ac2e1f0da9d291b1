package volume

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Upstream ExtractContainerResourceValue (divisor, rounding up) and defaultPodLimitsForDownwardAPI
// (missing limits from pod-level limits, else node allocatable).
func TestResourceFieldValue(t *testing.T) {
	q := resource.MustParse
	allocatable := corev1.ResourceList{corev1.ResourceCPU: q("4"), corev1.ResourceMemory: q("8Gi"), corev1.ResourceEphemeralStorage: q("100Gi")}
	c := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: q("2"), corev1.ResourceMemory: q("64Mi"), "hugepages-2Mi": q("4Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: q("250m"), corev1.ResourceMemory: q("32Mi")},
	}}
	bare := corev1.Container{Name: "bare"}
	zeroLimit := corev1.Container{Name: "zero", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("0")}}}
	initC := corev1.Container{Name: "init"}
	tests := []struct {
		name     string
		c        corev1.Container
		resource string
		divisor  string
		of       string // containerName
		podLimit corev1.ResourceList
		want     string
		wantErr  string
	}{
		{name: "limits.cpu in cores", c: c, resource: "limits.cpu", want: "2"},
		{name: "requests.cpu rounds up: 250m is 1 core", c: c, resource: "requests.cpu", want: "1"},
		{name: "requests.cpu in millicores", c: c, resource: "requests.cpu", divisor: "1m", want: "250"},
		{name: "limits.memory in bytes", c: c, resource: "limits.memory", want: "67108864"},
		{name: "requests.memory in Mi", c: c, resource: "requests.memory", divisor: "1Mi", want: "32"},
		{name: "limits.memory in Gi rounds up", c: c, resource: "limits.memory", divisor: "1Gi", want: "1"},
		{name: "hugepages limit", c: c, resource: "limits.hugepages-2Mi", want: "4194304"},
		{name: "no cpu limit: the node's allocatable", c: bare, resource: "limits.cpu", want: "4"},
		{name: "no memory limit: the node's allocatable", c: bare, resource: "limits.memory", divisor: "1Mi", want: "8192"},
		{name: "a zero limit counts as none", c: zeroLimit, resource: "limits.cpu", want: "4"},
		{name: "ephemeral-storage limit from the node", c: bare, resource: "limits.ephemeral-storage", divisor: "1Gi", want: "100"},
		{name: "no request: 0, never a default", c: bare, resource: "requests.memory", want: "0"},
		{name: "pod-level limit before the node's", c: bare, resource: "limits.memory", divisor: "1Mi",
			podLimit: corev1.ResourceList{corev1.ResourceMemory: q("512Mi")}, want: "512"},
		{name: "another container by name, defaulted", c: c, of: "bare", resource: "limits.cpu", want: "4"},
		{name: "an init container by name keeps its limits as they are (upstream)", c: c, of: "init", resource: "limits.cpu", want: "0"},
		{name: "unknown container", c: c, of: "nope", resource: "limits.cpu", wantErr: "container nope not found"},
		{name: "unknown resource", c: c, resource: "limits.pods", wantErr: "unsupported container resource : limits.pods"},
		{name: "neither limits nor requests", c: c, resource: "cpu", wantErr: "unsupported container resource : cpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{initC}, Containers: []corev1.Container{c, bare, zeroLimit}}}
			if tc.podLimit != nil {
				pod.Spec.Resources = &corev1.ResourceRequirements{Limits: tc.podLimit}
			}
			fs := &corev1.ResourceFieldSelector{Resource: tc.resource, ContainerName: tc.of}
			if tc.divisor != "" {
				fs.Divisor = q(tc.divisor)
			}
			got, err := resourceFieldValue(fs, pod, &tc.c, allocatable)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("value = %q, want %q", got, tc.want)
			}
		})
	}
	if _, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
		t.Error("the container's limits were changed; defaults must go into a copy")
	}
}

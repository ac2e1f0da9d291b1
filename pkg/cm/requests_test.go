package cm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func reqs(cpu, memory string) corev1.ResourceRequirements {
	r := corev1.ResourceList{}
	if cpu != "" {
		r[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		r[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return corev1.ResourceRequirements{Requests: r}
}

func ctr(name, cpu, memory string) corev1.Container {
	return corev1.Container{Name: name, Resources: reqs(cpu, memory)}
}

func sidecar(name, cpu, memory string) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c := ctr(name, cpu, memory)
	c.RestartPolicy = &always
	return c
}

// component-helpers PodRequests and KEP-753's formula: the pod needs the larger of (its regular
// containers + all sidecars) and (each init container + the sidecars started before it), per
// resource; pod-level requests replace the containers' for cpu and memory; overhead is added.
func TestPodRequests(t *testing.T) {
	tests := []struct {
		name            string
		spec            corev1.PodSpec
		wantCPU, wantMi string
	}{
		{"no requests", corev1.PodSpec{Containers: []corev1.Container{ctr("a", "", "")}}, "0", "0"},
		{"regular containers add up", corev1.PodSpec{Containers: []corev1.Container{ctr("a", "100m", "100Mi"), ctr("b", "200m", "50Mi")}}, "300m", "150Mi"},
		{"a big init container wins", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("init", "2", "10Mi")},
			Containers:     []corev1.Container{ctr("a", "100m", "100Mi"), ctr("b", "200m", "50Mi")}}, "2", "150Mi"},
		{"init containers: the largest, not the sum", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("i1", "1", "1Gi"), ctr("i2", "500m", "2Gi")},
			Containers:     []corev1.Container{ctr("a", "100m", "100Mi")}}, "1", "2Gi"},
		{"sidecars run with the app", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("s", "300m", "300Mi")},
			Containers:     []corev1.Container{ctr("a", "100m", "100Mi")}}, "400m", "400Mi"},
		{"an init container after a sidecar runs beside it", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar("s", "300m", "300Mi"), ctr("i", "1", "1Gi")},
			Containers:     []corev1.Container{ctr("a", "100m", "100Mi")}}, "1300m", "1324Mi"},
		{"an init container before a sidecar does not", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("i", "1", "1Gi"), sidecar("s", "300m", "300Mi")},
			Containers:     []corev1.Container{ctr("a", "100m", "100Mi")}}, "1", "1Gi"},
		{"overhead is added", corev1.PodSpec{
			Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")},
			Containers: []corev1.Container{ctr("a", "100m", "100Mi")}}, "350m", "220Mi"},
		{"pod-level requests replace the containers'", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			Containers: []corev1.Container{ctr("a", "100m", "100Mi")}}, "1", "100Mi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PodRequests(&corev1.Pod{Spec: tc.spec})
			if got.Cpu().Cmp(resource.MustParse(tc.wantCPU)) != 0 || got.Memory().Cmp(resource.MustParse(tc.wantMi)) != 0 {
				t.Errorf("PodRequests = cpu %s memory %s, want %s and %s", got.Cpu(), got.Memory(), tc.wantCPU, tc.wantMi)
			}
		})
	}
}

// A pod's memory limit is its cgroup's (upstream ResourceConfigForPod): the pod-level limit, else
// the containers' aggregate plus the overhead, only when every container and init container
// limits memory.
func TestPodMemoryLimit(t *testing.T) {
	limit := func(memory string) corev1.ResourceRequirements {
		if memory == "" {
			return corev1.ResourceRequirements{}
		}
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)}}
	}
	pod := func(containers, inits []string) *corev1.Pod {
		p := &corev1.Pod{}
		for _, m := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: limit(m)})
		}
		for _, m := range inits {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Resources: limit(m)})
		}
		return p
	}
	withOverhead := pod([]string{"100Mi"}, nil)
	withOverhead.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	podLevel := pod([]string{""}, nil)
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want int64
		ok   bool
	}{
		{"two containers: the sum", pod([]string{"100Mi", "200Mi"}, nil), 300 << 20, true},
		{"an init container bigger than the app: its limit", pod([]string{"100Mi"}, []string{"500Mi"}), 500 << 20, true},
		{"a container without a limit: none", pod([]string{"100Mi", ""}, nil), 0, false},
		{"an init container without a limit: none", pod([]string{"100Mi"}, []string{""}), 0, false},
		{"overhead added", withOverhead, 110 << 20, true},
		{"pod-level limit wins", podLevel, 1 << 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := PodMemoryLimit(tc.pod); got != tc.want || ok != tc.ok {
				t.Errorf("PodMemoryLimit = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

func cpuPod(uid, cpu string) *corev1.Pod {
	pod := apiPod(corev1.RestartPolicyAlways)
	pod.UID = types.UID("u-" + uid)
	pod.Generation = 2
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	return pod
}

// Upstream handlePodResourcesResize: a first sight allocates the spec; an unchanged spec does
// nothing; a resize that fits beside the others' allocations is allocated; one that does not
// waits as PodResizePending, reason Deferred, with the admission's message and the generation.
func TestDecideResize(t *testing.T) {
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	others := []*corev1.Pod{cpuPod("other", "1")}
	was := specResources(cpuPod("a", "500m"))

	if ok, pending := decideResize(cpuPod("a", "500m"), nil, others, allocatable); !ok || pending != nil {
		t.Errorf("first sight: allocate %v pending %v, want the spec allocated", ok, pending)
	}
	if ok, pending := decideResize(cpuPod("a", "500m"), was, others, allocatable); ok || pending != nil {
		t.Errorf("unchanged: allocate %v pending %v, want nothing", ok, pending)
	}
	if ok, pending := decideResize(cpuPod("a", "900m"), was, others, allocatable); !ok || pending != nil {
		t.Errorf("fits: allocate %v pending %v, want allocated", ok, pending)
	}
	ok, pending := decideResize(cpuPod("a", "1500m"), was, others, allocatable)
	if ok || pending == nil {
		t.Fatalf("does not fit: allocate %v pending %v, want Deferred", ok, pending)
	}
	want := "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000"
	if pending.Type != corev1.PodResizePending || pending.Reason != corev1.PodReasonDeferred || pending.Message != want || pending.ObservedGeneration != 2 {
		t.Errorf("pending = %+v, want Deferred %q at generation 2", pending, want)
	}
}

// The allocation checkpoint survives a restart (a new allocations reads the file), is written
// 0600, and withAllocation gives the allocated resources, not the spec's.
func TestAllocationsCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), allocationFile)
	a := &allocations{path: path}
	if err := a.set(cpuPod("a", "500m")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("checkpoint %v mode %v, want 0600", err, fi)
	}
	alloc, err := (&allocations{path: path}).get(cpuPod("a", "500m").UID)
	if err != nil || alloc == nil {
		t.Fatalf("reloaded allocation %v, %v", alloc, err)
	}
	got, changed := withAllocation(cpuPod("a", "900m"), alloc)
	if cpu := got.Spec.Containers[0].Resources.Limits.Cpu().String(); !changed || cpu != "500m" {
		t.Errorf("withAllocation: changed %v cpu %s, want the allocated 500m", changed, cpu)
	}
	if err := a.remove(cpuPod("a", "500m").UID); err != nil {
		t.Fatal(err)
	}
	if alloc, _ := (&allocations{path: path}).get(cpuPod("a", "500m").UID); alloc != nil {
		t.Errorf("removed allocation still read: %v", alloc)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (&allocations{path: path}).get("x"); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt checkpoint: %v, want a clear error", err)
	}
}

// The status reports the allocated resources of a running container, and PodResizeInProgress
// while the runtime has not applied them; both resize conditions go once it has.
func TestResizeStatus(t *testing.T) {
	pod := cpuPod("a", "500m")
	c := &pod.Spec.Containers[0]
	applied := &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 64 << 20}
	running := &kubecontainer.ContainerStatus{ID: "c1", Name: "app", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Resources: applied}
	running.Hash = kuberuntime.HashContainer(c)
	var cs corev1.ContainerStatus
	setStatusResources(&cs, c, running)
	if cs.Resources == nil || cs.Resources.Limits.Cpu().String() != "500m" || cs.AllocatedResources.Cpu().String() != "500m" {
		t.Errorf("status resources %+v allocated %v, want 500m", cs.Resources, cs.AllocatedResources)
	}
	rs := &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{running}}
	if conds := resizeConditions(pod, rs, nil); len(conds) != 0 {
		t.Errorf("applied: conditions %v, want none", conds)
	}
	resized := cpuPod("a", "900m")
	conds := resizeConditions(resized, rs, nil)
	if len(conds) != 1 || conds[0].Type != corev1.PodResizeInProgress || conds[0].ObservedGeneration != 2 {
		t.Errorf("not yet applied: conditions %v, want PodResizeInProgress", conds)
	}
}

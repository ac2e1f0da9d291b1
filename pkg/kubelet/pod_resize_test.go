package kubelet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podsource"
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

// The status reports the allocated resources of a running container.
func TestResizeStatusResources(t *testing.T) {
	pod := cpuPod("a", "500m")
	c := &pod.Spec.Containers[0]
	var cs corev1.ContainerStatus
	setStatusResources(&cs, c, appliedContainer(c))
	if cs.Resources == nil || cs.Resources.Limits.Cpu().String() != "500m" || cs.AllocatedResources.Cpu().String() != "500m" {
		t.Errorf("status resources %+v allocated %v, want 500m", cs.Resources, cs.AllocatedResources)
	}
}

// appliedContainer is c running with cpu 500m and memory 64Mi applied by the runtime.
func appliedContainer(c *corev1.Container) *kubecontainer.ContainerStatus {
	applied := &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuPeriod: 100000, CpuQuota: 50000, MemoryLimitInBytes: 64 << 20}
	cs := &kubecontainer.ContainerStatus{ID: "c1", Name: c.Name, State: runtimeapi.ContainerState_CONTAINER_RUNNING, Resources: applied}
	cs.Hash = kuberuntime.HashContainer(c)
	return cs
}

// Upstream status manager SetPodResizeInProgressCondition: an empty reason and message keep the
// condition's; its generation never moves (a new allocation clears it first); "changed" is a
// new condition or a new reason or message — when upstream sends ResizeError.
func TestNextResizeInProgress(t *testing.T) {
	errAt2 := &corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue,
		Reason: corev1.PodReasonError, Message: "boom", ObservedGeneration: 2}
	plainAt2 := &corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, ObservedGeneration: 2}
	for _, tc := range []struct {
		name            string
		old             *corev1.PodCondition
		reason, message string
		gen             int64
		want            *corev1.PodCondition
		changed         bool
	}{
		{"new, at the pod's generation", nil, "", "", 2, plainAt2, true},
		{"still in progress: nothing changes", plainAt2, "", "", 3, plainAt2, false},
		{"an error: reason and message, the old generation", plainAt2, corev1.PodReasonError, "boom", 3, errAt2, true},
		{"the same error again: unchanged", errAt2, corev1.PodReasonError, "boom", 3, errAt2, false},
		{"in progress after an error keeps the error", errAt2, "", "", 3, errAt2, false},
		{"a new error message", errAt2, corev1.PodReasonError, "bang", 3,
			&corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, Reason: corev1.PodReasonError, Message: "bang", ObservedGeneration: 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := nextResizeInProgress(tc.old, tc.reason, tc.message, tc.gen)
			if !apiequality.Semantic.DeepEqual(got, tc.want) || changed != tc.changed {
				t.Errorf("got %+v changed %v, want %+v changed %v", got, changed, tc.want, tc.changed)
			}
		})
	}
}

// A resize's conditions and Events as upstream's kubelet gives them: ResizeStarted and
// PodResizeInProgress at the allocation; a failed update makes it reason Error with the
// runtime's message and one ResizeError Event (not one per retry); once the runtime has what
// was allocated, the condition goes with ResizeCompleted carrying the resize's generation.
func TestResizeProgressEvents(t *testing.T) {
	recorder := record.NewFakeRecorder(10)
	k := &Kubelet{recorder: recorder, resizeInProgress: map[types.UID]*corev1.PodCondition{}}
	pod := cpuPod("a", "500m")
	rs := &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{appliedContainer(&pod.Spec.Containers[0])}}

	k.resizeStarted(pod)
	k.trackResizeProgress(cpuPod("a", "900m"), rs) // the runtime still has 500m
	if c := k.resizeInProgress[pod.UID]; c == nil || c.Reason != "" || c.ObservedGeneration != 2 {
		t.Errorf("not yet applied: %+v, want PodResizeInProgress at generation 2", c)
	}
	k.resizeFailed(pod, "update failed")
	k.resizeFailed(pod, "update failed")
	c := k.resizeInProgress[pod.UID]
	if c == nil || c.Reason != corev1.PodReasonError || c.Message != "update failed" || c.ObservedGeneration != 2 {
		t.Errorf("after a failed update: %+v, want PodResizeInProgress Error %q at generation 2", c, "update failed")
	}
	later := pod.DeepCopy()
	later.Generation = 3 // a later change of the pod (not a resize) does not move the resize's generation
	k.trackResizeProgress(later, rs)
	if c := resizeConditions(nil, k.resizeInProgress[pod.UID]); len(c) != 0 {
		t.Errorf("applied: conditions %v, want none", c)
	}
	close(recorder.Events)
	var got []string
	for e := range recorder.Events {
		got = append(got, e)
	}
	want := []string{"Normal ResizeStarted Pod resize started: ", "Warning ResizeError Pod resize error: ",
		"Normal ResizeCompleted Pod resize completed: "}
	if len(got) != len(want) {
		t.Fatalf("Events %q, want %d: %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) || !strings.Contains(got[i], `"generation":2`) {
			t.Errorf("Event %d = %q, want %q… at generation 2", i, got[i], want[i])
		}
	}
	if !strings.Contains(got[1], `"error":"update failed"`) {
		t.Errorf("ResizeError %q does not carry the runtime's message", got[1])
	}
}

// The whole path on the fake runtime: a resize of a running pod (its spec's resources and
// generation changed, as the resize subresource does) is allocated, applied with
// UpdateContainerResources without a restart, and reported — status resources and
// allocatedResources 900m, observedGeneration 2, no resize condition — with ResizeStarted and
// ResizeCompleted Events.
func TestResizeOnFakeRuntime(t *testing.T) {
	pod := testPod("resize")
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	pod.Generation = 1
	tk := newTestKubelet(t)
	tk.start(t, pod)
	before := tk.apiContainer(t, pod).ContainerID

	p := tk.apiPod(t, pod)
	l = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("900m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	p.Generation = 2
	if _, err := tk.client.CoreV1().Pods(p.Namespace).Update(tk.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tk.takeUpdate(t, podsource.UPDATE, pod)
	tk.settle(t, "the resize to be reported done", func() bool {
		got := tk.apiPod(t, pod)
		cs := tk.apiContainer(t, pod)
		return got.Status.ObservedGeneration == 2 && len(resizeConditionsOf(got)) == 0 &&
			cs.Resources != nil && cs.Resources.Limits.Cpu().String() == "900m" && cs.AllocatedResources.Cpu().String() == "900m"
	})
	if cs := tk.apiContainer(t, pod); cs.ContainerID != before || cs.RestartCount != 0 {
		t.Errorf("container %s restarts %d, want %s resized in place", cs.ContainerID, cs.RestartCount, before)
	}
	if !tk.hasEvent(eventResizeStarted) || !tk.hasEvent(eventResizeCompleted) {
		t.Errorf("Events %q, want ResizeStarted and ResizeCompleted", tk.events())
	}
}

// resizeConditionsOf is the pod's PodResizePending and PodResizeInProgress conditions.
func resizeConditionsOf(pod *corev1.Pod) []corev1.PodCondition {
	var out []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
			out = append(out, c)
		}
	}
	return out
}

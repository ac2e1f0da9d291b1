package kuberuntime

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

func testPod(policy corev1.RestartPolicy, names ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec:       corev1.PodSpec{RestartPolicy: policy},
	}
	for _, n := range names {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: n, Image: "busybox"})
	}
	return pod
}

func sandbox(id string, attempt uint32, state runtimeapi.PodSandboxState, ip string) *runtimeapi.PodSandboxStatus {
	return &runtimeapi.PodSandboxStatus{
		Id: id, State: state, Metadata: &runtimeapi.PodSandboxMetadata{Attempt: attempt},
		Network: &runtimeapi.PodSandboxNetworkStatus{Ip: ip},
	}
}

func running(pod *corev1.Pod, i int, id string) *kubecontainer.ContainerStatus {
	c := &pod.Spec.Containers[i]
	return &kubecontainer.ContainerStatus{ID: id, Name: c.Name, State: runtimeapi.ContainerState_CONTAINER_RUNNING, Hash: HashContainer(c)}
}

func exited(pod *corev1.Pod, i int, id string, code int32) *kubecontainer.ContainerStatus {
	c := &pod.Spec.Containers[i]
	return &kubecontainer.ContainerStatus{ID: id, Name: c.Name, State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: code, Hash: HashContainer(c), FinishedAt: time.Unix(100, 0)}
}

// The decisions of upstream computePodActions / ShouldContainerBeRestarted, one row each.
func TestComputePodActions(t *testing.T) {
	ready := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_READY, "10.88.0.2")
	dead := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_NOTREADY, "10.88.0.2")
	noKill := map[string]KillReason{}

	always := testPod(corev1.RestartPolicyAlways, "app", "sidecar")
	onFailure := testPod(corev1.RestartPolicyOnFailure, "app")
	never := testPod(corev1.RestartPolicyNever, "app")
	changed := testPod(corev1.RestartPolicyAlways, "app")
	changedStatus := running(changed, 0, "c1")
	changed.Spec.Containers[0].Image = "busybox:2"
	deleting := testPod(corev1.RestartPolicyAlways, "app")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(200, 0)}

	tests := []struct {
		name   string
		pod    *corev1.Pod
		status *kubecontainer.PodStatus
		want   PodActions
	}{
		{"new pod: sandbox and every container", always, &kubecontainer.PodStatus{},
			PodActions{KillPod: true, CreateSandbox: true, Attempt: 0, ContainersToStart: []int{0, 1}, ContainersToKill: noKill}},
		{"all running: nothing to do", always, &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{running(always, 0, "c1"), running(always, 1, "c2")}},
			PodActions{SandboxID: "sb1", ContainersToKill: noKill}},
		{"a container missing in a reused sandbox of attempt 2: start it with that attempt", always,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{sandbox("sb1", 2, runtimeapi.PodSandboxState_SANDBOX_READY, "10.88.0.2")}, Containers: []*kubecontainer.ContainerStatus{running(always, 0, "c1")}},
			PodActions{SandboxID: "sb1", Attempt: 2, ContainersToStart: []int{1}, ContainersToKill: noKill}},
		{"sandbox died: kill, new sandbox with the next attempt, start all", always,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{dead}, Containers: []*kubecontainer.ContainerStatus{running(always, 0, "c1")}},
			PodActions{KillPod: true, CreateSandbox: true, Attempt: 1, ContainersToStart: []int{0, 1}, ContainersToKill: noKill}},
		{"sandbox without IP: recreate", always,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{sandbox("sb1", 2, runtimeapi.PodSandboxState_SANDBOX_READY, "")}},
			PodActions{KillPod: true, CreateSandbox: true, Attempt: 3, ContainersToStart: []int{0, 1}, ContainersToKill: noKill}},
		{"Always: exited container restarts", always,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{exited(always, 0, "c1", 0), running(always, 1, "c2")}},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"OnFailure: failed container restarts", onFailure,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{exited(onFailure, 0, "c1", 1)}},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"OnFailure: succeeded container stays, sandbox stops", onFailure,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{exited(onFailure, 0, "c1", 0)}},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"OnFailure: dead sandbox does not rerun a succeeded container, nor make a new sandbox", onFailure,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{dead}, Containers: []*kubecontainer.ContainerStatus{exited(onFailure, 0, "c1", 0)}},
			PodActions{KillPod: true, ContainersToKill: noKill}},
		{"Never: failed container stays dead", never,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{exited(never, 0, "c1", 3)}},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"Never: dead sandbox after a run is not recreated", never,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{dead}, Containers: []*kubecontainer.ContainerStatus{exited(never, 0, "c1", 0)}},
			PodActions{KillPod: true, ContainersToKill: noKill}},
		{"spec hash changed: kill and start again", changed,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{changedStatus}},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: map[string]KillReason{"c1": {Name: "app", Message: "Container app definition changed, will be restarted"}}}},
		{"container not in spec is killed", testPod(corev1.RestartPolicyAlways, "app"),
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{
				running(testPod(corev1.RestartPolicyAlways, "app"), 0, "c1"), running(testPod(corev1.RestartPolicyAlways, "old"), 0, "c9")}},
			PodActions{SandboxID: "sb1", ContainersToKill: map[string]KillReason{"c9": {Name: "old", Message: "Container is not in the pod spec"}}}},
		{"pod being deleted: nothing restarts, everything stops", deleting,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: []*kubecontainer.ContainerStatus{exited(deleting, 0, "c1", 1)}},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := computePodActions(tc.pod, tc.status, noProbes{})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("computePodActions =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

// Resources are resized in place, so they are not part of the hash; the image is.
func TestHashContainer(t *testing.T) {
	c := corev1.Container{Name: "app", Image: "busybox"}
	h := HashContainer(&c)
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: *resourceQuantity("1")}
	if HashContainer(&c) != h {
		t.Error("a resources change altered the hash")
	}
	c.Image = "busybox:2"
	if HashContainer(&c) == h {
		t.Error("an image change did not alter the hash")
	}
}

func resourceQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// Like upstream's container GC (MaxPerPodContainer): two exited instances per container are kept.
func TestDeadContainersToRemove(t *testing.T) {
	pod := testPod(corev1.RestartPolicyAlways, "app", "side")
	st := &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{
		running(pod, 0, "a4"), exited(pod, 0, "a3", 1), exited(pod, 0, "a2", 1), exited(pod, 0, "a1", 1), exited(pod, 0, "a0", 1),
		exited(pod, 1, "s1", 0), exited(pod, 1, "s0", 0),
	}}
	if got := deadContainersToRemove(st); !reflect.DeepEqual(got, []string{"a1", "a0"}) {
		t.Errorf("to remove = %v, want the two oldest of app", got)
	}

	// A kubelet killed between CreateContainer and StartContainer leaves a created instance; the
	// restarted kubelet starts a new one. The created one is removed once replaced, not before.
	created := func(i int, id string) *kubecontainer.ContainerStatus {
		c := running(pod, i, id)
		c.State = runtimeapi.ContainerState_CONTAINER_CREATED
		return c
	}
	st = &kubecontainer.PodStatus{Containers: []*kubecontainer.ContainerStatus{running(pod, 0, "a1"), created(0, "a0"), created(1, "s0")}}
	if got := deadContainersToRemove(st); !reflect.DeepEqual(got, []string{"a0"}) {
		t.Errorf("to remove = %v, want the replaced created instance a0 only", got)
	}
}

// Upstream calcRestartCountByLogDir: a container recreated without a previous instance in the
// runtime continues after the highest <n>.log, so no log is overwritten.
func TestRestartCountFromLogDir(t *testing.T) {
	dir := t.TempDir()
	if got := restartCountFromLogDir(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("no directory: %d, want 0", got)
	}
	for _, name := range []string{"0.log", "3.log", "notes.txt", "x.log"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := restartCountFromLogDir(dir); got != 4 {
		t.Errorf("after 0.log and 3.log: %d, want 4", got)
	}
}

// Ephemeral containers start once, in a running sandbox, and are never restarted; a running one
// is not "outside the spec", and does not keep a finished pod alive.
func TestComputePodActionsEphemeral(t *testing.T) {
	ready := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_READY, "10.88.0.2")
	pod := testPod(corev1.RestartPolicyAlways, "app")
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{
		{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}},
		{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "done", Image: "busybox"}},
	}
	debugger := &kubecontainer.ContainerStatus{ID: "e1", Name: "debugger", State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	done := &kubecontainer.ContainerStatus{ID: "e2", Name: "done", State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 1}

	got := computePodActions(pod, &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready},
		Containers: []*kubecontainer.ContainerStatus{running(pod, 0, "c1")}}, noProbes{})
	if !reflect.DeepEqual(got.EphemeralContainersToStart, []int{0, 1}) || len(got.ContainersToKill) != 0 {
		t.Errorf("new ephemeral containers: to start %v, to kill %v; want [0 1], none", got.EphemeralContainersToStart, got.ContainersToKill)
	}
	got = computePodActions(pod, &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready},
		Containers: []*kubecontainer.ContainerStatus{running(pod, 0, "c1"), debugger, done}}, noProbes{})
	if len(got.EphemeralContainersToStart) != 0 || len(got.ContainersToKill) != 0 || got.KillPod {
		t.Errorf("ran once: %+v, want nothing to do", got)
	}
	never := testPod(corev1.RestartPolicyNever, "app")
	never.Spec.EphemeralContainers = pod.Spec.EphemeralContainers[:1]
	got = computePodActions(never, &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready},
		Containers: []*kubecontainer.ContainerStatus{exited(never, 0, "c1", 0), debugger}}, noProbes{})
	if !got.KillPod {
		t.Errorf("a finished pod with a running debugger: %+v, want KillPod", got)
	}
	got = computePodActions(pod, &kubecontainer.PodStatus{}, noProbes{})
	if !got.CreateSandbox || len(got.EphemeralContainersToStart) != 0 {
		t.Errorf("no sandbox yet: %+v, want a sandbox and no ephemeral container", got)
	}
}

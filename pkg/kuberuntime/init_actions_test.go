package kuberuntime

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// initPod is a pod with init containers (a name starting with "side" is a sidecar:
// restartPolicy Always) and regular containers.
func initPod(policy corev1.RestartPolicy, inits []string, containers ...string) *corev1.Pod {
	pod := testPod(policy, containers...)
	for _, n := range inits {
		c := corev1.Container{Name: n, Image: "busybox"}
		if len(n) >= 4 && n[:4] == "side" {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	return pod
}

// instance is a runtime instance of the pod's (init) container name.
func instance(pod *corev1.Pod, name, id string, state runtimeapi.ContainerState, code int32) *kubecontainer.ContainerStatus {
	c := containerSpec(pod, name)
	return &kubecontainer.ContainerStatus{ID: id, Name: name, State: state, ExitCode: code, Hash: HashContainer(c)}
}

const (
	runningState = runtimeapi.ContainerState_CONTAINER_RUNNING
	exitedState  = runtimeapi.ContainerState_CONTAINER_EXITED
)

// probeTable is ProbeResults from maps of container ID to result.
type probeTable struct{ liveness, startup map[string]ProbeResult }

func (p probeTable) Liveness(id string) (ProbeResult, bool) { r, ok := p.liveness[id]; return r, ok }
func (p probeTable) Startup(id string) (ProbeResult, bool)  { r, ok := p.startup[id]; return r, ok }

// The init-container and sidecar decisions of upstream computePodActions /
// computeInitContainerActions (KEP-753), one row each.
func TestComputeInitContainerActions(t *testing.T) {
	ready := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_READY, "10.88.0.2")
	dead := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_NOTREADY, "10.88.0.2")
	noKill := map[string]KillReason{}
	inReady := func(cs ...*kubecontainer.ContainerStatus) *kubecontainer.PodStatus {
		return &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: cs}
	}

	twoInits := initPod(corev1.RestartPolicyAlways, []string{"init-a", "init-b"}, "app")
	never := initPod(corev1.RestartPolicyNever, []string{"init-a"}, "app")
	sidecars := initPod(corev1.RestartPolicyAlways, []string{"side-1", "side-2"}, "app")
	probed := initPod(corev1.RestartPolicyAlways, []string{"side-1", "init-b"}, "app")
	probed.Spec.InitContainers[0].StartupProbe = &corev1.Probe{}
	probedBefore := instance(probed, "side-1", "s1", runningState, 0)
	job := initPod(corev1.RestartPolicyNever, []string{"side-1"}, "app")
	liveApp := initPod(corev1.RestartPolicyAlways, nil, "app")
	liveApp.Spec.Containers[0].LivenessProbe = &corev1.Probe{}

	tests := []struct {
		name   string
		pod    *corev1.Pod
		status *kubecontainer.PodStatus
		probes ProbeResults
		want   PodActions
	}{
		{"new pod: a sandbox and only the first init container", twoInits, &kubecontainer.PodStatus{}, noProbes{},
			PodActions{KillPod: true, CreateSandbox: true, InitContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"first init container running: wait for it", twoInits, inReady(instance(twoInits, "init-a", "i1", runningState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToKill: noKill}},
		{"first init container succeeded: start the second", twoInits, inReady(instance(twoInits, "init-a", "i1", exitedState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{1}, ContainersToKill: noKill}},
		{"all init containers succeeded: start the app", twoInits,
			inReady(instance(twoInits, "init-a", "i1", exitedState, 0), instance(twoInits, "init-b", "i2", exitedState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"init container failed, restartPolicy Always: restart it, no app yet", twoInits, inReady(instance(twoInits, "init-a", "i1", exitedState, 1)), noProbes{},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"init container failed, restartPolicy Never: the pod is killed", never, inReady(instance(never, "init-a", "i1", exitedState, 1)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"app running: completed init containers are not run again", twoInits,
			inReady(instance(twoInits, "app", "a1", runningState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToKill: noKill}},
		{"sidecar running without a startup probe: the next sidecar starts", sidecars, inReady(instance(sidecars, "side-1", "s1", runningState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{1}, ContainersToKill: noKill}},
		{"both sidecars running: the app starts beside them", sidecars,
			inReady(instance(sidecars, "side-1", "s1", runningState, 0), instance(sidecars, "side-2", "s2", runningState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"sidecar exited after initialization: restarted, the app keeps running", sidecars,
			inReady(instance(sidecars, "side-1", "s1", exitedState, 0), instance(sidecars, "side-2", "s2", runningState, 0), instance(sidecars, "app", "a1", runningState, 0)), noProbes{},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"sidecar with a startup probe not yet run: the next init container waits", probed, inReady(probedBefore), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToKill: noKill}},
		{"sidecar's startup probe succeeded: the next init container starts", probed, inReady(probedBefore),
			probeTable{startup: map[string]ProbeResult{"s1": ProbeSuccess}},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{1}, ContainersToKill: noKill}},
		{"sidecar's startup probe failed: killed and started again", probed, inReady(probedBefore),
			probeTable{startup: map[string]ProbeResult{"s1": ProbeFailure}},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{0},
				ContainersToKill: map[string]KillReason{"s1": {Name: "side-1", Reason: "StartupProbe", Message: "Init container side-1 failed startup probe"}}}},
		{"app completed with restartPolicy Never: the sidecar is not kept, the pod is killed", job,
			inReady(instance(job, "side-1", "s1", runningState, 0), instance(job, "app", "a1", exitedState, 0)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"liveness failure: the container is killed and restarted", liveApp, inReady(instance(liveApp, "app", "a1", runningState, 0)),
			probeTable{liveness: map[string]ProbeResult{"a1": ProbeFailure}},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0},
				ContainersToKill: map[string]KillReason{"a1": {Name: "app", Reason: "LivenessProbe", Message: "Container app failed liveness probe, will be restarted"}}}},
		{"sandbox died after initialization: start over from the first init container", twoInits,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{dead}, Containers: []*kubecontainer.ContainerStatus{instance(twoInits, "app", "a1", exitedState, 137)}}, noProbes{},
			PodActions{KillPod: true, CreateSandbox: true, Attempt: 1, InitContainersToStart: []int{0}, ContainersToKill: noKill}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := computePodActions(tc.pod, tc.status, tc.probes)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("computePodActions =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

// Sidecars stop after every regular container, in reverse order; regular containers stop
// together (upstream newTerminationOrdering).
func TestTerminationOrder(t *testing.T) {
	pod := initPod(corev1.RestartPolicyAlways, []string{"side-1", "init-x", "side-2"}, "app", "web")
	var all []*kubecontainer.ContainerStatus
	for _, n := range []string{"side-1", "side-2", "app", "web"} {
		all = append(all, &kubecontainer.ContainerStatus{Name: n, State: runningState})
	}
	o := terminationOrder(pod, all)
	want := map[string][]string{"side-2": {"app", "web"}, "side-1": {"app", "web", "side-2"}}
	if !reflect.DeepEqual(o.prereqs, want) {
		t.Errorf("prereqs = %v, want %v", o.prereqs, want)
	}
	if remainingGrace(30, 0) != 30 || remainingGrace(30, 29_500_000_000) != 2 || remainingGrace(30, 10_000_000_000) != 20 {
		t.Errorf("remainingGrace: %d %d %d", remainingGrace(30, 0), remainingGrace(30, 29_500_000_000), remainingGrace(30, 10_000_000_000))
	}
}

// Two running instances of one name (a replacement started beside an old one) both stop, and
// the second stop does not close the channel again (it used to panic the kubelet).
func TestStoppedTwice(t *testing.T) {
	pod := initPod(corev1.RestartPolicyAlways, []string{"side-1"}, "app")
	two := []*kubecontainer.ContainerStatus{{Name: "app", State: runningState}, {Name: "app", State: runningState}, {Name: "side-1", State: runningState}}
	o := terminationOrder(pod, two)
	o.stopped("app")
	o.stopped("app")
	o.stopped("side-1")
}

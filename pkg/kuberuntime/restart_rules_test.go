package kuberuntime

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// withPolicy gives the pod's container (or init container) name its own restartPolicy and rules.
func withPolicy(pod *corev1.Pod, name string, policy corev1.ContainerRestartPolicy, rules ...corev1.ContainerRestartRule) *corev1.Pod {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				list[i].RestartPolicy, list[i].RestartPolicyRules = ptr.To(policy), rules
			}
		}
	}
	return pod
}

func restartOnExit(codes ...int32) corev1.ContainerRestartRule {
	return corev1.ContainerRestartRule{Action: corev1.ContainerRestartRuleActionRestart,
		ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: codes}}
}

// Container restart rules in upstream computePodActions / computeInitContainerActions with
// ContainerRestartRules on (KEP-5307, its v1.36 default): a container's own restartPolicy
// overrides the pod's, and a rule whose exit codes match with action Restart restarts it even
// under the pod's restartPolicy Never. A container killed by a probe, or in an unknown state, has
// no exit code: only its restartPolicy is read.
func TestComputePodActionsRestartRules(t *testing.T) {
	ready := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_READY, "10.88.0.2")
	dead := sandbox("sb1", 0, runtimeapi.PodSandboxState_SANDBOX_NOTREADY, "10.88.0.2")
	noKill := map[string]KillReason{}
	inReady := func(cs ...*kubecontainer.ContainerStatus) *kubecontainer.PodStatus {
		return &kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{ready}, Containers: cs}
	}
	never, onFailure, always := corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyAlways

	retry42 := withPolicy(testPod(corev1.RestartPolicyNever, "app"), "app", never, restartOnExit(42))
	alwaysInNever := withPolicy(testPod(corev1.RestartPolicyNever, "app", "job"), "app", always)
	neverInAlways := withPolicy(testPod(corev1.RestartPolicyAlways, "app"), "app", never)
	onFailureInAlways := withPolicy(testPod(corev1.RestartPolicyAlways, "app"), "app", onFailure)
	probedNever := withPolicy(testPod(corev1.RestartPolicyAlways, "app"), "app", never)
	initRetry := withPolicy(initPod(corev1.RestartPolicyNever, []string{"init-a"}, "app"), "init-a", never, restartOnExit(42))
	initOnFailure := withPolicy(initPod(corev1.RestartPolicyNever, []string{"init-a"}, "app"), "init-a", onFailure)
	initUnknown := withPolicy(initPod(corev1.RestartPolicyAlways, []string{"init-a"}, "app"), "init-a", never)

	tests := []struct {
		name   string
		pod    *corev1.Pod
		status *kubecontainer.PodStatus
		probes ProbeResults
		want   PodActions
	}{
		{"rule Restart on 42 under pod Never: exit 42 restarts the container", retry42,
			inReady(exited(retry42, 0, "c1", 42)), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"rule Restart on 42 under pod Never: exit 1 does not, the pod stops", retry42,
			inReady(exited(retry42, 0, "c1", 1)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"container Always overrides pod Never: restarted after exit 0, the other stays dead", alwaysInNever,
			inReady(exited(alwaysInNever, 0, "c1", 0), exited(alwaysInNever, 1, "c2", 0)), noProbes{},
			PodActions{SandboxID: "sb1", ContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"container Never overrides pod Always: a failure is final", neverInAlways,
			inReady(exited(neverInAlways, 0, "c1", 1)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"container OnFailure overrides pod Always: a success is final", onFailureInAlways,
			inReady(exited(onFailureInAlways, 0, "c1", 0)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"container OnFailure in a new sandbox: a succeeded container is not run again", onFailureInAlways,
			&kubecontainer.PodStatus{Sandboxes: []*runtimeapi.PodSandboxStatus{dead}, Containers: []*kubecontainer.ContainerStatus{exited(onFailureInAlways, 0, "c1", 0)}}, noProbes{},
			PodActions{KillPod: true, ContainersToKill: noKill}},
		{"liveness failure with container Never: killed, not restarted; nothing is left, the pod stops", probedNever,
			inReady(running(probedNever, 0, "c1")), probeTable{liveness: map[string]ProbeResult{"c1": ProbeFailure}},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: map[string]KillReason{"c1": {Name: "app", Reason: "LivenessProbe", Message: "Container app failed liveness probe"}}}},
		{"init container rule Restart on 42 under pod Never: restarted", initRetry,
			inReady(instance(initRetry, "init-a", "i1", exitedState, 42)), noProbes{},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"init container rule Restart on 42, exit 1: the pod fails", initRetry,
			inReady(instance(initRetry, "init-a", "i1", exitedState, 1)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
		{"init container OnFailure under pod Never: restarted after a failure", initOnFailure,
			inReady(instance(initOnFailure, "init-a", "i1", exitedState, 3)), noProbes{},
			PodActions{SandboxID: "sb1", InitContainersToStart: []int{0}, ContainersToKill: noKill}},
		{"init container Never under pod Always, unknown state: the pod fails", initUnknown,
			inReady(instance(initUnknown, "init-a", "i1", runtimeapi.ContainerState_CONTAINER_UNKNOWN, 0)), noProbes{},
			PodActions{KillPod: true, SandboxID: "sb1", ContainersToKill: noKill}},
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

// End to end on the fake runtime: under the pod's restartPolicy Never, a container whose exit code
// matches its Restart rule is started again (restartCount 1); one whose exit code does not match
// stays dead and, nothing being left to run, the pod's sandbox is stopped (KEP-5307, as upstream
// computePodActions does with ContainerRestartRules on).
func TestSyncPodRestartRules(t *testing.T) {
	for _, tc := range []struct {
		name        string
		exitCode    string
		wantRestart bool
	}{
		{"exit 42 matches the rule: restarted", "42", true},
		{"exit 1 does not: the pod stops", "1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, ctx, _ := newFakeRuntime(t)
			pod := withPolicy(podWithCommand(corev1.RestartPolicyNever, "sh", "-c", "exit "+tc.exitCode), "app",
				corev1.ContainerRestartPolicyNever, restartOnExit(42))
			if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
				t.Fatal(err)
			}
			var st *kubecontainer.PodStatus
			err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				st = podStatus(t, ctx, m, pod)
				c := st.FindContainer("app")
				return c != nil && c.State == runtimeapi.ContainerState_CONTAINER_EXITED, nil
			})
			if err != nil {
				t.Fatalf("container never exited: %+v", st.FindContainer("app"))
			}
			if err := m.SyncPod(ctx, pod, st).Err(); err != nil {
				t.Fatal(err)
			}
			st = podStatus(t, ctx, m, pod)
			c := st.FindContainer("app")
			restarted := c.RestartCount == 1
			sandboxReady := st.Sandboxes[0].GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
			if restarted != tc.wantRestart || sandboxReady != tc.wantRestart {
				t.Errorf("after the exit: restartCount %d, sandbox %s; want restarted=%v with the sandbox ready only then",
					c.RestartCount, st.Sandboxes[0].GetState(), tc.wantRestart)
			}
		})
	}
}

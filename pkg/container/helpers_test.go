package container

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func rules(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) []corev1.ContainerRestartRule {
	return []corev1.ContainerRestartRule{{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}}
}

// Upstream podutil.ContainerShouldRestart with the v1.36 default gates (ContainerRestartRules
// on): a matching rule first, then the container's restartPolicy, then the pod's.
func TestContainerShouldRestart(t *testing.T) {
	always, onFailure, never := ptr.To(corev1.ContainerRestartPolicyAlways), ptr.To(corev1.ContainerRestartPolicyOnFailure), ptr.To(corev1.ContainerRestartPolicyNever)
	restartOn42 := rules(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpIn, 42)
	restartUnless0 := rules(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0)
	restartAllOn7 := rules(corev1.ContainerRestartRuleActionRestartAllContainers, corev1.ContainerRestartRuleOnExitCodesOpIn, 7)
	tests := []struct {
		name      string
		podPolicy corev1.RestartPolicy
		container corev1.Container
		exitCode  int32
		want      bool
	}{
		{"pod Always, exit 0: restarted", corev1.RestartPolicyAlways, corev1.Container{}, 0, true},
		{"pod unset is Always", "", corev1.Container{}, 0, true},
		{"pod OnFailure, exit 0: not restarted", corev1.RestartPolicyOnFailure, corev1.Container{}, 0, false},
		{"pod OnFailure, exit 1: restarted", corev1.RestartPolicyOnFailure, corev1.Container{}, 1, true},
		{"pod Never, exit 1: not restarted", corev1.RestartPolicyNever, corev1.Container{}, 1, false},
		{"container Always overrides pod Never", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: always}, 0, true},
		{"container OnFailure overrides pod Always, exit 0", corev1.RestartPolicyAlways, corev1.Container{RestartPolicy: onFailure}, 0, false},
		{"container OnFailure, exit 3", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: onFailure}, 3, true},
		{"container Never overrides pod Always", corev1.RestartPolicyAlways, corev1.Container{RestartPolicy: never}, 1, false},
		{"rule In 42 matches under pod Never", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: never, RestartPolicyRules: restartOn42}, 42, true},
		{"rule In 42 does not match 1: container Never", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: never, RestartPolicyRules: restartOn42}, 1, false},
		{"rule NotIn 0 matches 2", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: never, RestartPolicyRules: restartUnless0}, 2, true},
		{"rule NotIn 0 does not match 0", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: never, RestartPolicyRules: restartUnless0}, 0, false},
		{"rules without a container restartPolicy are not read", corev1.RestartPolicyNever, corev1.Container{RestartPolicyRules: restartOn42}, 42, false},
		{"RestartAllContainers rule restarts the container (gate on)", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: never, RestartPolicyRules: restartAllOn7}, 7, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{RestartPolicy: tc.podPolicy}
			if got := ContainerShouldRestart(&tc.container, spec, tc.exitCode); got != tc.want {
				t.Errorf("ContainerShouldRestart = %v, want %v", got, tc.want)
			}
		})
	}
}

// Upstream kubecontainer.ShouldContainerBeRestarted: deletion, no instance, created, unknown and
// running come before the exit code.
func TestShouldContainerBeRestarted(t *testing.T) {
	c := &corev1.Container{Name: "app"}
	withState := func(state runtimeapi.ContainerState, code int32) *PodStatus {
		return &PodStatus{Containers: []*ContainerStatus{{Name: "app", State: state, ExitCode: code}}}
	}
	pod := func(policy corev1.RestartPolicy, deleting bool) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: policy}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		}
		return p
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		status *PodStatus
		want   bool
	}{
		{"never ran: started", pod(corev1.RestartPolicyNever, false), &PodStatus{}, true},
		{"nil status: started", pod(corev1.RestartPolicyNever, false), nil, true},
		{"being deleted: never started", pod(corev1.RestartPolicyAlways, true), &PodStatus{}, false},
		{"running: not started again", pod(corev1.RestartPolicyAlways, false), withState(runtimeapi.ContainerState_CONTAINER_RUNNING, 0), false},
		{"created only: started", pod(corev1.RestartPolicyNever, false), withState(runtimeapi.ContainerState_CONTAINER_CREATED, 0), true},
		{"unknown: started", pod(corev1.RestartPolicyNever, false), withState(runtimeapi.ContainerState_CONTAINER_UNKNOWN, 0), true},
		{"exited 1 under Never: not started", pod(corev1.RestartPolicyNever, false), withState(runtimeapi.ContainerState_CONTAINER_EXITED, 1), false},
		{"exited 1 under OnFailure: started", pod(corev1.RestartPolicyOnFailure, false), withState(runtimeapi.ContainerState_CONTAINER_EXITED, 1), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShouldContainerBeRestarted(c, tc.pod, tc.status); got != tc.want {
				t.Errorf("ShouldContainerBeRestarted = %v, want %v", got, tc.want)
			}
		})
	}
}

// Upstream computePodActions and computeInitContainerActions: a container stopped without an exit
// code (probe failure, unknown state) follows only the container's restartPolicy, else the pod's;
// in a new sandbox a container that succeeded is skipped when its own (or the pod's) policy is
// OnFailure.
func TestRestartsWithoutExitCodeAndRunsOnce(t *testing.T) {
	always, onFailure, never := ptr.To(corev1.ContainerRestartPolicyAlways), ptr.To(corev1.ContainerRestartPolicyOnFailure), ptr.To(corev1.ContainerRestartPolicyNever)
	restartOn1 := rules(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpIn, 1)
	tests := []struct {
		name              string
		podPolicy         corev1.RestartPolicy
		container         corev1.Container
		restarts, runOnce bool
	}{
		{"pod Always", corev1.RestartPolicyAlways, corev1.Container{}, true, false},
		{"pod OnFailure", corev1.RestartPolicyOnFailure, corev1.Container{}, true, true},
		{"pod Never", corev1.RestartPolicyNever, corev1.Container{}, false, false},
		{"container Always under pod Never", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: always}, true, false},
		{"container OnFailure under pod Never", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: onFailure}, true, true},
		{"container Always under pod OnFailure", corev1.RestartPolicyOnFailure, corev1.Container{RestartPolicy: always}, true, false},
		{"container Never under pod Always", corev1.RestartPolicyAlways, corev1.Container{RestartPolicy: never}, false, false},
		{"rules are not read without an exit code", corev1.RestartPolicyNever, corev1.Container{RestartPolicy: never, RestartPolicyRules: restartOn1}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{RestartPolicy: tc.podPolicy}
			if got := RestartsWithoutExitCode(&tc.container, spec); got != tc.restarts {
				t.Errorf("RestartsWithoutExitCode = %v, want %v", got, tc.restarts)
			}
			if got := RunsOnce(&tc.container, spec); got != tc.runOnce {
				t.Errorf("RunsOnce = %v, want %v", got, tc.runOnce)
			}
		})
	}
}

// Upstream podutil.IsRestartableInitContainer: restartPolicy Always, nothing else.
func TestIsRestartableInitContainer(t *testing.T) {
	for _, tc := range []struct {
		c    *corev1.Container
		want bool
	}{
		{nil, false},
		{&corev1.Container{}, false},
		{&corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}, true},
		{&corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyOnFailure)}, false},
	} {
		if got := IsRestartableInitContainer(tc.c); got != tc.want {
			t.Errorf("IsRestartableInitContainer(%v) = %v, want %v", tc.c, got, tc.want)
		}
	}
}

// Upstream kubetypes.IsStaticPod: the config.source annotation is set and is not "api".
func TestIsStaticPod(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		want        bool
	}{
		{nil, false},
		{map[string]string{ConfigSourceAnnotationKey: ApiserverSource}, false},
		{map[string]string{ConfigSourceAnnotationKey: "file"}, true},
		{map[string]string{ConfigSourceAnnotationKey: "http"}, true},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
		if got := IsStaticPod(pod); got != tc.want {
			t.Errorf("IsStaticPod(%v) = %v, want %v", tc.annotations, got, tc.want)
		}
	}
}

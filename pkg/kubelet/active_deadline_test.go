package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Upstream activeDeadlineHandler.pastActiveDeadline: counted from status.startTime; no deadline
// or no start time is never past it.
func TestPastActiveDeadline(t *testing.T) {
	start := metav1.NewTime(now.Add(-10 * time.Second))
	withDeadline := func(s int64) *corev1.Pod {
		pod := apiPod(corev1.RestartPolicyAlways)
		pod.Spec.ActiveDeadlineSeconds = ptr.To(s)
		return pod
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		status corev1.PodStatus
		want   bool
	}{
		{"no deadline", apiPod(corev1.RestartPolicyAlways), corev1.PodStatus{StartTime: &start}, false},
		{"not started", withDeadline(5), corev1.PodStatus{}, false},
		{"within the deadline", withDeadline(11), corev1.PodStatus{StartTime: &start}, false},
		{"at the deadline", withDeadline(10), corev1.PodStatus{StartTime: &start}, true},
		{"past it", withDeadline(3), corev1.PodStatus{StartTime: &start}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pastActiveDeadline(tc.pod, tc.status, now); got != tc.want {
				t.Errorf("pastActiveDeadline = %v, want %v", got, tc.want)
			}
		})
	}
}

// A pod the kubelet evicts (DeadlineExceeded) is Failed with upstream's reason and message, even
// while its container still runs; the kill follows.
func TestEvictedStatus(t *testing.T) {
	pod := apiPod(corev1.RestartPolicyAlways)
	rs := &kubecontainer.PodStatus{Sandboxes: readySandboxes(), Containers: []*kubecontainer.ContainerStatus{inst("c1", runtimeapi.ContainerState_CONTAINER_RUNNING, 0, 0)}}
	st := generateAPIPodStatus(pod, rs, statusInputs{now: now, runtimeName: "fake",
		evict: &podEviction{reason: reasonDeadlineExceeded, message: messageDeadlineExceeded}})
	if st.Phase != corev1.PodFailed || st.Reason != "DeadlineExceeded" || st.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("status = %s %q %q", st.Phase, st.Reason, st.Message)
	}
	if c := condition(st, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "PodFailed" {
		t.Errorf("Ready = %+v, want False PodFailed", c)
	}
}

// A pod the eviction manager evicts is Failed, reason Evicted, with its message and the
// DisruptionTarget condition (replacing one the API had), as upstream's kill PodStatusFunc.
func TestEvictedByEvictionManagerStatus(t *testing.T) {
	pod := apiPod(corev1.RestartPolicyAlways)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse, Reason: "old"}}
	rs := &kubecontainer.PodStatus{Sandboxes: readySandboxes(), Containers: []*kubecontainer.ContainerStatus{inst("c1", runtimeapi.ContainerState_CONTAINER_RUNNING, 0, 0)}}
	const msg = "The node was low on resource: memory. "
	target := &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonTerminationByKubelet, Message: msg}
	st := generateAPIPodStatus(pod, rs, statusInputs{now: now, runtimeName: "fake", evict: &podEviction{reason: "Evicted", message: msg, condition: target}})
	if st.Phase != corev1.PodFailed || st.Reason != "Evicted" || st.Message != msg {
		t.Errorf("status = %s %q %q", st.Phase, st.Reason, st.Message)
	}
	var targets []corev1.PodCondition
	for _, c := range st.Conditions {
		if c.Type == corev1.DisruptionTarget {
			targets = append(targets, c)
		}
	}
	if len(targets) != 1 || targets[0].Status != corev1.ConditionTrue || targets[0].Reason != "TerminationByKubelet" || targets[0].Message != msg {
		t.Errorf("DisruptionTarget conditions = %+v, want one, True TerminationByKubelet", targets)
	}
}

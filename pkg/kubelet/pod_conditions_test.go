package kubelet

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/statusmanager"
)

func podCondition(conditions []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// Upstream generateAPIPodStatus: the conditions others own (a readiness gate's) are kept from the
// API status, before the kubelet's own; Ready is True only when the containers are ready and
// every readiness gate's condition is True; a stale copy of a kubelet condition in the API does
// not survive.
func TestGenerateAPIPodStatusReadinessGates(t *testing.T) {
	gate := corev1.PodConditionType("k8s.io/test-condition1")
	running := inst("c1", runtimeapi.ContainerState_CONTAINER_RUNNING, 0, 0)
	for _, tc := range []struct {
		name      string
		gate      *corev1.PodCondition
		wantReady corev1.ConditionStatus
		wantMsg   string
	}{
		{"gate missing", nil, corev1.ConditionFalse, `corresponding condition of pod readiness gate "k8s.io/test-condition1" does not exist.`},
		{"gate False", &corev1.PodCondition{Type: gate, Status: corev1.ConditionFalse}, corev1.ConditionFalse, `the status of pod readiness gate "k8s.io/test-condition1" is not "True", but False`},
		{"gate True", &corev1.PodCondition{Type: gate, Status: corev1.ConditionTrue}, corev1.ConditionTrue, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := apiPod(corev1.RestartPolicyAlways)
			pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "stale"}}
			if tc.gate != nil {
				pod.Status.Conditions = append(pod.Status.Conditions, *tc.gate)
			}
			rs := &kubecontainer.PodStatus{ID: "u1", IPs: []string{"10.88.0.5"}, Sandboxes: readySandboxes(), Containers: []*kubecontainer.ContainerStatus{running}}
			st := generateAPIPodStatus(pod, rs, statusInputs{nodeIP: "10.0.0.1", runtimeName: "fake", now: now})
			var types []corev1.PodConditionType
			for _, c := range st.Conditions {
				types = append(types, c.Type)
			}
			want := []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled}
			if tc.gate != nil {
				want = append([]corev1.PodConditionType{gate}, want...)
			}
			if !reflect.DeepEqual(types, want) {
				t.Errorf("conditions %v, want %v", types, want)
			}
			ready := podCondition(st.Conditions, corev1.PodReady)
			if ready.Status != tc.wantReady || ready.Message != tc.wantMsg {
				t.Errorf("Ready = %+v, want %s %q", ready, tc.wantReady, tc.wantMsg)
			}
			if tc.wantReady == corev1.ConditionFalse && ready.Reason != statusmanager.ReasonReadinessGatesNotReady {
				t.Errorf("Ready reason = %q, want ReadinessGatesNotReady", ready.Reason)
			}
			if cr := podCondition(st.Conditions, corev1.ContainersReady); cr.Status != corev1.ConditionTrue {
				t.Errorf("ContainersReady = %s, want True: the gates do not count for it", cr.Status)
			}
		})
	}
}

// Upstream (PodObservedGenerationTracking, GA in v1.35): every condition the kubelet sets carries
// the pod's generation; the conditions of others keep theirs.
func TestGenerateAPIPodStatusObservedGeneration(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	pod := apiPod(corev1.RestartPolicyAlways)
	pod.Generation = 4
	pod.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: corev1.ConditionTrue, ObservedGeneration: 1}}
	st := generateAPIPodStatus(pod, &kubecontainer.PodStatus{ID: "u1"}, statusInputs{nodeIP: "10.0.0.1", now: now})
	for _, c := range st.Conditions {
		want := int64(4)
		if c.Type == gate {
			want = 1
		}
		if c.ObservedGeneration != want {
			t.Errorf("%s: observedGeneration %d, want %d", c.Type, c.ObservedGeneration, want)
		}
	}
}

// Upstream generateAPIPodStatus and sortPodIPs: hostIP(s) are the node's; a host-network pod's
// podIP(s) too; other pods get the runtime's, one per family, the node's family first.
func TestGenerateAPIPodStatusIPs(t *testing.T) {
	rs := &kubecontainer.PodStatus{ID: "u1", IPs: []string{"fd00::5", "10.88.0.5", "10.88.0.6"}, Sandboxes: readySandboxes()}
	pod := apiPod(corev1.RestartPolicyAlways)
	st := generateAPIPodStatus(pod, rs, statusInputs{nodeIP: "10.213.0.1", now: now})
	if st.HostIP != "10.213.0.1" || !reflect.DeepEqual(st.HostIPs, []corev1.HostIP{{IP: "10.213.0.1"}}) {
		t.Errorf("hostIP %q hostIPs %v, want the node's", st.HostIP, st.HostIPs)
	}
	if st.PodIP != "10.88.0.5" || !reflect.DeepEqual(st.PodIPs, []corev1.PodIP{{IP: "10.88.0.5"}, {IP: "fd00::5"}}) {
		t.Errorf("podIP %q podIPs %v, want 10.88.0.5 then fd00::5", st.PodIP, st.PodIPs)
	}

	pod.Spec.HostNetwork = true
	st = generateAPIPodStatus(pod, rs, statusInputs{nodeIP: "10.213.0.1", now: now})
	if st.PodIP != "10.213.0.1" || !reflect.DeepEqual(st.PodIPs, []corev1.PodIP{{IP: "10.213.0.1"}}) {
		t.Errorf("host-network pod: podIP %q podIPs %v, want the node's", st.PodIP, st.PodIPs)
	}
}

func TestSortPodIPs(t *testing.T) {
	tests := []struct {
		name   string
		ips    []string
		nodeIP string
		want   []string
	}{
		{"none", nil, "10.0.0.1", nil},
		{"v4 node: v4 first", []string{"fd00::1", "10.1.0.1"}, "10.0.0.1", []string{"10.1.0.1", "fd00::1"}},
		{"v6 node: v6 first", []string{"10.1.0.1", "fd00::1"}, "fd00::10", []string{"fd00::1", "10.1.0.1"}},
		{"one per family, canonical form", []string{"10.1.0.1", "10.1.0.2", "fd00:0::1"}, "10.0.0.1", []string{"10.1.0.1", "fd00::1"}},
		{"garbage skipped", []string{"not-an-ip", "10.1.0.1"}, "10.0.0.1", []string{"10.1.0.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sortPodIPs(tc.ips, tc.nodeIP); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sortPodIPs = %v, want %v", got, tc.want)
			}
		})
	}
}

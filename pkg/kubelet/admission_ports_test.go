package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream nodeports Fits / HostPortInfo.CheckConflict: same protocol and port clash when the
// addresses are equal or either is 0.0.0.0 (also what an empty hostIP means); plain init
// containers hold no port, sidecars do.
func TestAdmitHostPorts(t *testing.T) {
	withPort := func(ip string, proto corev1.Protocol, port int32) *corev1.Pod {
		pod := apiPod(corev1.RestartPolicyAlways)
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: port, HostIP: ip, Protocol: proto}}
		return pod
	}
	sidecar := func(always bool) *corev1.Pod {
		pod := apiPod(corev1.RestartPolicyAlways)
		init := corev1.Container{Name: "init", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}}
		if always {
			p := corev1.ContainerRestartPolicyAlways
			init.RestartPolicy = &p
		}
		pod.Spec.InitContainers = []corev1.Container{init}
		return pod
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		other    *corev1.Pod
		conflict bool
	}{
		{"no host port", withPort("", "", 0), withPort("", "", 0), false},
		{"same port, both every address", withPort("", "", 8080), withPort("", corev1.ProtocolTCP, 8080), true},
		{"another port", withPort("", "", 8080), withPort("", "", 8081), false},
		{"another protocol", withPort("", corev1.ProtocolUDP, 8080), withPort("", "", 8080), false},
		{"two addresses", withPort("127.0.0.1", "", 8080), withPort("127.0.0.2", "", 8080), false},
		{"one address against every address", withPort("127.0.0.1", "", 8080), withPort("0.0.0.0", "", 8080), true},
		{"every address against one address", withPort("", "", 8080), withPort("127.0.0.2", "", 8080), true},
		{"sidecar holds its port", withPort("", "", 8080), sidecar(true), true},
		{"plain init container holds nothing", withPort("", "", 8080), sidecar(false), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := admitHostPorts(tc.pod, []*corev1.Pod{tc.other})
			if got.admit == tc.conflict {
				t.Fatalf("admitHostPorts = %+v, want conflict %v", got, tc.conflict)
			}
			if tc.conflict && (got.reason != "NodePorts" ||
				got.message != "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports") {
				t.Errorf("reason %q message %q, not upstream's", got.reason, got.message)
			}
		})
	}
}

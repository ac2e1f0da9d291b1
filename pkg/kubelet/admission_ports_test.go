package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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

// The exact case of upstream's conformance spec "[sig-network] HostPort validates that there is no
// conflict between pods with same hostPort but different hostIP and protocol"
// (test/e2e/network/hostport.go): pod1 (127.0.0.1, TCP), pod2 (the node's IP, TCP) and pod3 (the
// node's IP, UDP) on host port 54323 are admitted one after another, each beside those admitted
// before it; a pod that then asks for a (protocol, address, port) one of them holds is refused
// with upstream's NodePorts reason and message, one that asks for a free pair is admitted.
func TestAdmitHostPortsConformanceSpec(t *testing.T) {
	const nodeIP, port = "10.213.0.1", int32(54323)
	hostPortPod := func(name, ip string, proto corev1.Protocol) *corev1.Pod {
		pod := apiPod(corev1.RestartPolicyAlways)
		pod.Name, pod.UID = name, types.UID(name)
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: port, HostIP: ip, Protocol: proto}}
		return pod
	}
	var running []*corev1.Pod
	for _, pod := range []*corev1.Pod{
		hostPortPod("pod1", "127.0.0.1", corev1.ProtocolTCP),
		hostPortPod("pod2", nodeIP, corev1.ProtocolTCP),
		hostPortPod("pod3", nodeIP, corev1.ProtocolUDP),
	} {
		if got := admitHostPorts(pod, running); !got.admit {
			t.Fatalf("%s beside %d pods: %+v, want admitted", pod.Name, len(running), got)
		}
		running = append(running, pod)
	}

	const upstream = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	tests := []struct {
		name   string
		pod    *corev1.Pod
		refuse bool
	}{
		{"pod2's address and protocol again", hostPortPod("pod4", nodeIP, corev1.ProtocolTCP), true},
		{"pod3's address and protocol again", hostPortPod("pod4", nodeIP, corev1.ProtocolUDP), true},
		{"pod1's loopback address again", hostPortPod("pod4", "127.0.0.1", ""), true},
		{"every address, TCP (pod1 and pod2 hold it)", hostPortPod("pod4", "", corev1.ProtocolTCP), true},
		{"every address, UDP (pod3 holds it)", hostPortPod("pod4", "0.0.0.0", corev1.ProtocolUDP), true},
		{"loopback address, UDP (free)", hostPortPod("pod4", "127.0.0.1", corev1.ProtocolUDP), false},
		{"another address, TCP (free)", hostPortPod("pod4", "10.213.0.2", corev1.ProtocolTCP), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := admitHostPorts(tc.pod, running)
			if got.admit == tc.refuse {
				t.Fatalf("admitHostPorts = %+v, want refused %v", got, tc.refuse)
			}
			if tc.refuse && (got.reason != "NodePorts" || got.message != upstream) {
				t.Errorf("reason %q message %q, want NodePorts and %q", got.reason, got.message, upstream)
			}
		})
	}
}

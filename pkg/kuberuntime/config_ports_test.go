package kuberuntime

import (
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The sandbox's port mappings are upstream's (generatePodSandboxConfig with
// kubecontainer.MakePortMappings): every port of the regular containers, hostPort or not, the
// protocol TCP when unset; a port listed twice in one container (same name, or unnamed with the
// same family, protocol, hostIP and ports) once; init containers' ports not at all.
func TestPortMappings(t *testing.T) {
	tcp, udp := runtimeapi.Protocol_TCP, runtimeapi.Protocol_UDP
	tests := []struct {
		name  string
		ports [][]corev1.ContainerPort // one list per regular container
		init  []corev1.ContainerPort
		want  []*runtimeapi.PortMapping
	}{
		{name: "no ports"},
		{name: "a hostPort with its hostIP, and a port without one",
			ports: [][]corev1.ContainerPort{{
				{ContainerPort: 8080, HostPort: 54323, HostIP: "127.0.0.1", Protocol: corev1.ProtocolTCP},
				{ContainerPort: 9090},
			}},
			want: []*runtimeapi.PortMapping{
				{Protocol: tcp, ContainerPort: 8080, HostPort: 54323, HostIp: "127.0.0.1"},
				{Protocol: tcp, ContainerPort: 9090},
			}},
		{name: "same port, TCP and UDP, and on IPv4 and IPv6 host addresses",
			ports: [][]corev1.ContainerPort{{
				{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolTCP},
				{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP},
				{ContainerPort: 80, HostPort: 80, HostIP: "10.213.0.1"},
				{ContainerPort: 80, HostPort: 80, HostIP: "fd00::1"},
			}},
			want: []*runtimeapi.PortMapping{
				{Protocol: tcp, ContainerPort: 53, HostPort: 53},
				{Protocol: udp, ContainerPort: 53, HostPort: 53},
				{Protocol: tcp, ContainerPort: 80, HostPort: 80, HostIp: "10.213.0.1"},
				{Protocol: tcp, ContainerPort: 80, HostPort: 80, HostIp: "fd00::1"},
			}},
		{name: "a port listed twice in one container is mapped once; in two containers twice",
			ports: [][]corev1.ContainerPort{
				{{ContainerPort: 80}, {ContainerPort: 80}, {Name: "web", ContainerPort: 81}, {Name: "web", ContainerPort: 82}},
				{{ContainerPort: 80}},
			},
			want: []*runtimeapi.PortMapping{
				{Protocol: tcp, ContainerPort: 80}, {Protocol: tcp, ContainerPort: 81}, {Protocol: tcp, ContainerPort: 80},
			}},
		{name: "init containers' ports are not the sandbox's",
			init: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			for _, ports := range tc.ports {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Ports: ports})
			}
			pod.Spec.InitContainers = []corev1.Container{{Ports: tc.init}}
			got := portMappings(pod)
			same := len(got) == len(tc.want)
			for i := 0; same && i < len(got); i++ {
				same = proto.Equal(got[i], tc.want[i])
			}
			if !same {
				t.Errorf("portMappings = %v, want %v", got, tc.want)
			}
		})
	}
}

package volume

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func service(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

// Upstream getServiceEnvVarMap (which Services) and envvars.FromServices (which variables).
func TestServiceEnv(t *testing.T) {
	apiServer := service("default", "kubernetes", "10.96.0.1", corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP})
	apiServerVars := map[string]string{
		"KUBERNETES_SERVICE_HOST":       "10.96.0.1",
		"KUBERNETES_SERVICE_PORT":       "443",
		"KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT":               "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP":       "tcp://10.96.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":  "443",
		"KUBERNETES_PORT_443_TCP_ADDR":  "10.96.0.1",
	}
	foo := service("shop", "foo-service", "10.96.0.9", corev1.ServicePort{Port: 8765}, corev1.ServicePort{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP})
	fooVars := map[string]string{
		"FOO_SERVICE_SERVICE_HOST":         "10.96.0.9",
		"FOO_SERVICE_SERVICE_PORT":         "8765",
		"FOO_SERVICE_SERVICE_PORT_DNS_UDP": "53",
		"FOO_SERVICE_PORT":                 "tcp://10.96.0.9:8765",
		"FOO_SERVICE_PORT_8765_TCP":        "tcp://10.96.0.9:8765",
		"FOO_SERVICE_PORT_8765_TCP_PROTO":  "tcp",
		"FOO_SERVICE_PORT_8765_TCP_PORT":   "8765",
		"FOO_SERVICE_PORT_8765_TCP_ADDR":   "10.96.0.9",
		"FOO_SERVICE_PORT_53_UDP":          "udp://10.96.0.9:53",
		"FOO_SERVICE_PORT_53_UDP_PROTO":    "udp",
		"FOO_SERVICE_PORT_53_UDP_PORT":     "53",
		"FOO_SERVICE_PORT_53_UDP_ADDR":     "10.96.0.9",
	}
	v6 := service("shop", "v6", "fd00::9", corev1.ServicePort{Port: 80})
	union := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			maps.Copy(out, m)
		}
		return out
	}
	tests := []struct {
		name     string
		services []*corev1.Service
		ns       string
		links    bool
		want     map[string]string
	}{
		{name: "links: the namespace's Services and the API server's", services: []*corev1.Service{apiServer, foo}, ns: "shop", links: true,
			want: union(apiServerVars, fooVars)},
		{name: "enableServiceLinks false: only the API server's", services: []*corev1.Service{apiServer, foo}, ns: "shop", links: false,
			want: apiServerVars},
		{name: "other namespaces' Services are not linked", services: []*corev1.Service{apiServer, foo}, ns: "cafe", links: true,
			want: apiServerVars},
		{name: "headless and IP-less Services are skipped", services: []*corev1.Service{
			service("shop", "headless", corev1.ClusterIPNone, corev1.ServicePort{Port: 80}),
			service("shop", "pending", "", corev1.ServicePort{Port: 80}),
		}, ns: "shop", links: true, want: map[string]string{}},
		{name: "a \"kubernetes\" Service of the pod's namespace wins over the API server's", services: []*corev1.Service{
			apiServer, service("shop", "kubernetes", "10.96.7.7", corev1.ServicePort{Port: 80}),
		}, ns: "shop", links: true, want: map[string]string{
			"KUBERNETES_SERVICE_HOST": "10.96.7.7", "KUBERNETES_SERVICE_PORT": "80", "KUBERNETES_PORT": "tcp://10.96.7.7:80",
			"KUBERNETES_PORT_80_TCP": "tcp://10.96.7.7:80", "KUBERNETES_PORT_80_TCP_PROTO": "tcp",
			"KUBERNETES_PORT_80_TCP_PORT": "80", "KUBERNETES_PORT_80_TCP_ADDR": "10.96.7.7",
		}},
		{name: "IPv6 addresses in brackets in URLs", services: []*corev1.Service{v6}, ns: "shop", links: true, want: map[string]string{
			"V6_SERVICE_HOST": "fd00::9", "V6_SERVICE_PORT": "80", "V6_PORT": "tcp://[fd00::9]:80",
			"V6_PORT_80_TCP": "tcp://[fd00::9]:80", "V6_PORT_80_TCP_PROTO": "tcp", "V6_PORT_80_TCP_PORT": "80", "V6_PORT_80_TCP_ADDR": "fd00::9",
		}},
		{name: "no Services (no API server Service yet)", ns: "shop", links: true, want: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ServiceEnv(tc.services, tc.ns, tc.links)
			if !maps.Equal(got, tc.want) {
				t.Errorf("env =\n  %v\nwant\n  %v", got, tc.want)
			}
		})
	}
}

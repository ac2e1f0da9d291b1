package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's allowlist admission: the safe set only, slashed names normalized, and no network
// sysctl in the node's network namespace.
func TestCheckSysctls(t *testing.T) {
	pod := func(hostNet bool, names ...string) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: hostNet, SecurityContext: &corev1.PodSecurityContext{}}}
		for _, n := range names {
			p.Spec.SecurityContext.Sysctls = append(p.Spec.SecurityContext.Sysctls, corev1.Sysctl{Name: n, Value: "1"})
		}
		return p
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"none", &corev1.Pod{}, ""},
		{"safe", pod(false, "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range"), ""},
		{"slashes", pod(false, "kernel/shm_rmid_forced"), ""},
		{"unsafe", pod(false, "kernel.shm_rmid_forced", "kernel.msgmax"), `forbidden sysctl: "kernel.msgmax" not allowlisted`},
		{"net with hostNetwork", pod(true, "net.ipv4.tcp_syncookies"), `forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled`},
		{"ipc with hostNetwork", pod(true, "kernel.shm_rmid_forced"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := checkSysctls(tc.pod); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("checkSysctls = %q, want %q", got, tc.want)
			}
		})
	}
}

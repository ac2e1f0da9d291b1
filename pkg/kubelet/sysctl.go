package kubelet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// The sysctls a pod may set: upstream's safe set (pkg/kubelet/sysctl/safe_sysctls.go), each with
// the namespace it lives in. A sysctl outside it is "unsafe": upstream admits those only when the
// node allows them with --allowed-unsafe-sysctls, a flag minikubelet does not have.
var safeSysctls = map[string]string{
	"kernel.shm_rmid_forced":              "IPC",
	"net.ipv4.ip_local_port_range":        "Net",
	"net.ipv4.tcp_syncookies":             "Net",
	"net.ipv4.ping_group_range":           "Net",
	"net.ipv4.ip_unprivileged_port_start": "Net",
	"net.ipv4.ip_local_reserved_ports":    "Net",
	"net.ipv4.tcp_keepalive_time":         "Net",
	"net.ipv4.tcp_fin_timeout":            "Net",
	"net.ipv4.tcp_keepalive_intvl":        "Net",
	"net.ipv4.tcp_keepalive_probes":       "Net",
	"net.ipv4.tcp_rmem":                   "Net",
	"net.ipv4.tcp_wmem":                   "Net",
}

// reasonSysctlForbidden is the reason of a pod rejected for its sysctls.
const reasonSysctlForbidden = "SysctlForbidden"

// checkSysctls is upstream's sysctl admission handler (pkg/kubelet/sysctl/allowlist.go): every
// sysctl of the pod must be in the safe set, and a network sysctl cannot be set in the node's own
// network namespace (hostNetwork), nor an IPC one in its IPC namespace (hostIPC). The message
// is what the rejected pod's status shows: forbidden sysctl: "kernel.msgmax" not allowlisted.
// Simplified: upstream drops from the safe set the sysctls the node's kernel is too old for.
func checkSysctls(pod *corev1.Pod) error {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		name := kuberuntime.NormalizeSysctlName(s.Name)
		ns, ok := safeSysctls[name]
		switch {
		case !ok:
			return fmt.Errorf("forbidden sysctl: %q not allowlisted", name)
		case ns == "Net" && pod.Spec.HostNetwork, ns == "IPC" && pod.Spec.HostIPC:
			return fmt.Errorf("forbidden sysctl: %q not allowed with host %s enabled", name, ns)
		}
	}
	return nil
}

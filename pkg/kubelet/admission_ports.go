package kubelet

// Admission by host ports: a pod may not ask for a host port another admitted pod on the node
// already holds (upstream: pkg/kubelet/lifecycle/predicate.go generalFilter, which runs
// pkg/scheduler/eventhandlers.go AdmissionCheck → plugins/nodeports Fits; the conflict rule is
// kube-scheduler framework HostPortInfo.CheckConflict).

import (
	corev1 "k8s.io/api/core/v1"
)

// Upstream's reason (the plugin's name, as predicate.go's PredicateFailureError) and its
// description of a host-port conflict.
const (
	reasonNodePorts  = "NodePorts"
	nodePortsErrDesc = "node(s) didn't have free ports for the requested pod ports"
)

// hostPort is one host port a pod holds, sanitised as upstream: no protocol is TCP, no host IP
// is 0.0.0.0 (every address).
type hostPort struct {
	ip, protocol string
	port         int32
}

// hostPorts lists the host ports of pod: those of its containers and of its sidecars (init
// containers with restartPolicy Always, which run as long as the pod); plain init containers
// finish before the pod runs and hold nothing (upstream scheduler util GetHostPorts).
func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(c corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: string(p.Protocol), port: p.HostPort}
			if hp.ip == "" {
				hp.ip = "0.0.0.0"
			}
			if hp.protocol == "" {
				hp.protocol = string(corev1.ProtocolTCP)
			}
			out = append(out, hp)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for _, c := range pod.Spec.Containers {
		add(c)
	}
	return out
}

// conflicts says whether two host ports clash: same protocol and port, and the same address or
// either of them every address (0.0.0.0).
func (a hostPort) conflicts(b hostPort) bool {
	if a.protocol != b.protocol || a.port != b.port {
		return false
	}
	return a.ip == b.ip || a.ip == "0.0.0.0" || b.ip == "0.0.0.0"
}

// admitHostPorts rejects pod if one of its host ports clashes with one of others' (the active
// pods), with upstream's reason NodePorts and message "Predicate NodePorts failed: node(s)
// didn't have free ports for the requested pod ports". Pure.
func admitHostPorts(pod *corev1.Pod, others []*corev1.Pod) admission {
	want := hostPorts(pod)
	if len(want) == 0 {
		return admitted
	}
	for _, other := range others {
		for _, used := range hostPorts(other) {
			for _, w := range want {
				if w.conflicts(used) {
					return admission{reason: reasonNodePorts,
						message: "Predicate " + reasonNodePorts + " failed: " + nodePortsErrDesc}
				}
			}
		}
	}
	return admitted
}

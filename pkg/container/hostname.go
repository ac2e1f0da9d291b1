package container

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// PodHostnameAndDomain is the pod's hostname and DNS domain as upstream kubelet_pods.go
// GeneratePodHostNameAndDomain: spec.hostnameOverride (the HostnameOverride gate, on since
// v1.35) with no domain; else spec.hostname or the pod's name, and with spec.subdomain the domain
// <subdomain>.<namespace>.svc.<clusterDomain>. A hostname is cut to 63 characters, then of
// trailing '-' and '.'. The sandbox's hostname (kuberuntime) and the managed /etc/hosts
// (pkg/kubelet) both come from here.
func PodHostnameAndDomain(pod *corev1.Pod, clusterDomain string) (hostname, domain string, err error) {
	if o := pod.Spec.HostnameOverride; o != nil {
		if msgs := validation.IsDNS1123Subdomain(*o); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod HostnameOverride %q is not a valid DNS subdomain: %s", *o, strings.Join(msgs, ";"))
		}
		hostname, err = TruncateHostname(pod.Name, *o)
		return hostname, "", err
	}
	hostname = pod.Name
	if h := pod.Spec.Hostname; h != "" {
		if msgs := validation.IsDNS1123Label(h); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", h, strings.Join(msgs, ";"))
		}
		hostname = h
	}
	if hostname, err = TruncateHostname(pod.Name, hostname); err != nil {
		return "", "", err
	}
	if sub := pod.Spec.Subdomain; sub != "" {
		if msgs := validation.IsDNS1123Label(sub); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", sub, strings.Join(msgs, ";"))
		}
		domain = fmt.Sprintf("%s.%s.svc.%s", sub, pod.Namespace, clusterDomain)
	}
	return hostname, domain, nil
}

// TruncateHostname cuts a hostname to the 63 characters a Linux hostname may have.
func TruncateHostname(podName, hostname string) (string, error) {
	const maxLen = 63
	if len(hostname) <= maxLen {
		return hostname, nil
	}
	cut := strings.TrimRight(hostname[:maxLen], "-.")
	if cut == "" {
		return "", fmt.Errorf("hostname for pod %q was invalid: %q", podName, hostname)
	}
	return cut, nil
}

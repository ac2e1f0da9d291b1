package kubelet

// The kubelet-managed /etc/hosts of a pod's containers (upstream: pkg/kubelet/kubelet_pods.go
// shouldMountHostsFile, makeHostsMount, ensureHostsFile, managedHostsFileContent,
// nodeHostsFileContent, hostsEntriesFromHostAliases). The hostname and domain: pkg/container.

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/atomicfile"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

const (
	etcHostsPath = "/etc/hosts" // in the container, and the node's own (read for host-network pods)

	managedHostsHeader                = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderWithHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// shouldMountHostsFile is upstream's rule: a container gets the managed /etc/hosts when its pod
// has an IP (its sandbox's network is up) or uses the host network, and the container does not
// mount a volume at /etc/hosts itself.
func shouldMountHostsFile(pod *corev1.Pod, c *corev1.Container, podIPs []string) bool {
	if len(podIPs) == 0 && !pod.Spec.HostNetwork {
		return false
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == etcHostsPath {
			return false
		}
	}
	return true
}

// hostsFileContent is what the pod's /etc/hosts holds: for a pod on the pod network, localhost,
// the pod's own name on each of its IPs and the hostAliases (managedHostsFileContent); for a
// host-network pod, the node's hosts file (nodeHostsFile) with the aliases added.
func hostsFileContent(pod *corev1.Pod, podIPs []string, clusterDomain, nodeHostsFile string) ([]byte, error) {
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(nodeHostsFile)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(managedHostsHeaderWithHostNetwork), node...), hostAliasEntries(pod.Spec.HostAliases)...), nil
	}
	hostname, domain, err := kubecontainer.PodHostnameAndDomain(pod, clusterDomain)
	if err != nil {
		return nil, err
	}
	return managedHostsFileContent(podIPs, hostname, domain, pod.Spec.HostAliases), nil
}

// managedHostsFileContent is the hosts file of a pod on the pod network:
//
//	# Kubernetes-managed hosts file.
//	127.0.0.1	localhost
//	::1	localhost ip6-localhost ip6-loopback
//	fe00::0	ip6-localnet
//	fe00::0	ip6-mcastprefix
//	fe00::1	ip6-allnodes
//	fe00::2	ip6-allrouters
//	10.88.0.7	web-0.web.shop.svc.cluster.local	web-0   one line per pod IP (no FQDN without a subdomain)
//
//	# Entries added by HostAliases.
//	123.45.67.89	foo	bar                                 one line per alias
func managedHostsFileContent(podIPs []string, hostname, domain string, aliases []corev1.HostAlias) []byte {
	var b bytes.Buffer
	b.WriteString(managedHostsHeader)
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	for _, ip := range podIPs {
		if domain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
		}
	}
	b.Write(hostAliasEntries(aliases))
	return b.Bytes()
}

// hostAliasEntries is the hostAliases section: nothing without aliases.
func hostAliasEntries(aliases []corev1.HostAlias) []byte {
	if len(aliases) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\n# Entries added by HostAliases.\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
	}
	return b.Bytes()
}

// writeHostsFile makes path hold content with mode 0644, atomically: a new file renamed over the
// old one, so a container starting meanwhile never sees half a file. Containers already running
// keep the file they were started with (their bind mount holds its inode); unchanged content is
// not written again. (Upstream rewrites the file in place at every container start.)
func writeHostsFile(path string, content []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() == 0o644 {
			return nil
		}
	}
	return atomicfile.WriteFile(path, content, 0o644) // containers of any user read it
}

package kubelet

import (
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/pkg/dns"
)

// newDNSConfigurer makes the pods' DNS from clusterDNS, clusterDomain and resolvConf, as
// upstream's NewMainKubelet makes its dns.Configurer. clusterDNS entries were validated as IPs
// by pkg/options.
func (k *Kubelet) newDNSConfigurer() *dns.Configurer {
	cfg := &k.opts.Config
	var clusterDNS []net.IP
	for _, s := range cfg.ClusterDNS {
		clusterDNS = append(clusterDNS, net.ParseIP(s))
	}
	return &dns.Configurer{
		Recorder:       k.recorder,
		NodeRef:        &corev1.ObjectReference{Kind: "Node", Name: k.opts.NodeName, UID: types.UID(k.opts.NodeName)},
		NodeIPs:        []net.IP{k.nodeIP},
		ClusterDNS:     clusterDNS,
		ClusterDomain:  cfg.ClusterDomain,
		ResolverConfig: *cfg.ResolverConfig,
	}
}

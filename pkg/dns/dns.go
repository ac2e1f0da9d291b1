package dns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// The limits the API server validates spec.dnsConfig against, and that glibc's resolver keeps
// (pkg/apis/core/validation MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars).
const (
	maxNameservers     = 3
	maxSearchPaths     = 32
	maxSearchListChars = 2048
	maxSearchPathChars = 253 // a DNS-1123 subdomain
	maxResolvConfBytes = 10 << 20
)

// Event reasons, as upstream.
const (
	ReasonMissingClusterDNS = "MissingClusterDNS"
	ReasonDNSConfigForming  = "DNSConfigForming"
	ReasonCheckLimits       = "CheckLimitsForResolvConf"
)

// Configurer turns a pod's dnsPolicy and dnsConfig into the DNS config of its sandbox.
type Configurer struct {
	// Recorder records the Warning Events; required.
	Recorder record.EventRecorder
	// NodeRef is the node, for the Events about the node's own settings; required.
	NodeRef *corev1.ObjectReference
	// NodeIPs pick 127.0.0.1 or ::1 when resolvConf is "" (one nameserver per IP family).
	NodeIPs []net.IP
	// ClusterDNS are the cluster DNS Service's IPs (clusterDNS); empty: ClusterFirst falls back.
	ClusterDNS []net.IP
	// ClusterDomain is clusterDomain, e.g. cluster.local; "" adds no cluster search domains.
	ClusterDomain string
	// ResolverConfig is resolvConf, the node's resolver file; "" means none.
	ResolverConfig string
}

// policy is what a dnsPolicy amounts to.
type policy int

const (
	policyCluster policy = iota
	policyHost
	policyNone
)

// podPolicy is upstream's getPodDNSType: ClusterFirst on a host-network pod is Default, and
// only ClusterFirstWithHostNet gives such a pod the cluster's DNS. Pure.
func podPolicy(pod *corev1.Pod) (policy, error) {
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone:
		return policyNone, nil
	case corev1.DNSClusterFirstWithHostNet:
		return policyCluster, nil
	case corev1.DNSClusterFirst:
		if !pod.Spec.HostNetwork {
			return policyCluster, nil
		}
		return policyHost, nil
	case corev1.DNSDefault:
		return policyHost, nil
	}
	return policyCluster, fmt.Errorf("invalid DNSPolicy=%v", pod.Spec.DNSPolicy)
}

// PodDNS returns the DNS config of pod's sandbox (upstream Configurer.GetPodDNS). It fails only
// when the node's resolvConf cannot be read or parsed.
func (c *Configurer) PodDNS(ctx context.Context, pod *corev1.Pod) (*runtimeapi.DNSConfig, error) {
	logger := klog.FromContext(ctx)
	cfg, err := c.hostDNS()
	if err != nil {
		return nil, err
	}
	pol, err := podPolicy(pod)
	if err != nil {
		logger.Error(err, "Failed to get DNS type for pod. Falling back to DNSClusterFirst policy.", "pod", klog.KObj(pod))
	}
	switch {
	case pol == policyNone:
		cfg = &runtimeapi.DNSConfig{}
	case pol == policyCluster && len(c.ClusterDNS) > 0:
		// The cluster DNS is the only nameserver: it forwards what it does not serve itself.
		cfg.Servers = nil
		for _, ip := range c.ClusterDNS {
			cfg.Servers = append(cfg.Servers, ip.String())
		}
		cfg.Searches = clusterSearches(pod.Namespace, c.ClusterDomain, cfg.Searches)
		cfg.Options = []string{"ndots:5"}
	default:
		if pol == policyCluster {
			msg := fmt.Sprintf("kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.", corev1.DNSClusterFirst, corev1.DNSDefault)
			c.Recorder.Eventf(c.NodeRef, corev1.EventTypeWarning, ReasonMissingClusterDNS, "%s", msg)
			c.Recorder.Eventf(pod, corev1.EventTypeWarning, ReasonMissingClusterDNS, "pod: %q. %s", podDesc(pod), msg)
		}
		if c.ResolverConfig == "" {
			cfg.Servers, cfg.Searches = loopbackServers(c.NodeIPs), []string{"."}
		}
	}
	if dc := pod.Spec.DNSConfig; dc != nil {
		cfg.Servers = unique(append(cfg.Servers, dc.Nameservers...))
		cfg.Searches = unique(append(cfg.Searches, dc.Searches...))
		cfg.Options = mergeOptions(cfg.Options, dc.Options)
	}
	var warnings []string
	cfg.Servers, cfg.Searches, warnings = fitLimits(cfg.Servers, cfg.Searches)
	for _, w := range warnings {
		c.Recorder.Event(pod, corev1.EventTypeWarning, ReasonDNSConfigForming, w)
		logger.Error(errors.New(w), "DNS config limits exceeded", "pod", klog.KObj(pod))
	}
	return cfg, nil
}

// podDesc is upstream's format.Pod: name_namespace(uid).
func podDesc(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// hostDNS reads the node's resolvConf; "" gives an empty config.
func (c *Configurer) hostDNS() (*runtimeapi.DNSConfig, error) {
	if c.ResolverConfig == "" {
		return &runtimeapi.DNSConfig{}, nil
	}
	f, err := os.Open(c.ResolverConfig)
	if err != nil {
		return nil, fmt.Errorf("open resolvConf %s (the base of pods' DNS; set resolvConf in the config, or --resolv-conf): %w", c.ResolverConfig, err)
	}
	defer f.Close()
	servers, searches, options, err := parseResolvConf(f)
	if err != nil {
		return nil, fmt.Errorf("Encountered error while parsing resolv conf file. Error: %w", err) //nolint:staticcheck // upstream's message
	}
	return &runtimeapi.DNSConfig{Servers: servers, Searches: searches, Options: options}, nil
}

// clusterSearches puts <ns>.svc.<domain> svc.<domain> <domain> before the node's search
// domains, duplicates dropped (upstream generateSearchesForDNSClusterFirst). Pure.
func clusterSearches(namespace, domain string, host []string) []string {
	if domain == "" {
		return host
	}
	return unique(append([]string{namespace + ".svc." + domain, "svc." + domain, domain}, host...))
}

// loopbackServers is the node's own resolver, one address per IP family of the node, for
// resolvConf "" (upstream: "use the nameserver on the local machine"). Pure.
func loopbackServers(nodeIPs []net.IP) []string {
	var servers []string
	for _, ip := range nodeIPs {
		if ip.To4() == nil {
			servers = append(servers, "::1")
		} else {
			servers = append(servers, "127.0.0.1")
		}
	}
	if len(servers) == 0 {
		servers = []string{"127.0.0.1"}
	}
	return servers
}

// parseResolvConf reads nameserver, search and options lines as upstream: comments skipped, the
// last search line wins, a trailing dot dropped from each domain, options merged by name (the
// later wins). A nameserver line without an address is an error.
func parseResolvConf(r io.Reader) (servers, searches, options []string, err error) {
	data, err := io.ReadAll(io.LimitReader(r, maxResolvConfBytes+1))
	if err != nil {
		return nil, nil, nil, err
	}
	if len(data) > maxResolvConfBytes {
		return nil, nil, nil, fmt.Errorf("the read limit is reached")
	}
	servers, searches, options = []string{}, []string{}, []string{}
	var errs []error
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) < 2 {
				errs = append(errs, errors.New("nameserver list is empty "))
				continue
			}
			servers = append(servers, fields[1])
		case "search":
			searches = []string{}
			for _, s := range fields[1:] {
				if s != "." {
					searches = append(searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			for _, o := range fields[1:] {
				options = setOption(options, o)
			}
		}
	}
	return servers, searches, options, errors.Join(errs...)
}

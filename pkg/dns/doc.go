// Package dns decides a pod's /etc/resolv.conf: which nameservers, search domains and options
// the runtime writes for its sandbox (CRI PodSandboxConfig.DnsConfig; containerd writes the file
// and bind-mounts it into every container, the fake runtime shows it at /etc/resolv.conf).
//
// Upstream counterpart (k8s.io/kubernetes v1.36): pkg/kubelet/network/dns/dns.go (Configurer,
// GetPodDNS, CheckLimitsForResolvConf, parseResolvConf and the limit helpers); the limits are
// pkg/apis/core/validation's MaxDNSNameservers (3), MaxDNSSearchPaths (32) and
// MaxDNSSearchListChars (2048).
//
// From dnsPolicy to a resolv.conf (Configurer.PodDNS):
//
//	base: the node's resolvConf file (default /etc/resolv.conf; "" = none)
//	dnsPolicy ─┬─ None ─────────────────────▶ nothing from the base: only spec.dnsConfig
//	           ├─ ClusterFirst (not hostNetwork), ClusterFirstWithHostNet
//	           │    clusterDNS set ─────────▶ nameservers = clusterDNS,
//	           │                              search = <ns>.svc.<domain> svc.<domain> <domain> + the base's,
//	           │                              options = ndots:5
//	           │    clusterDNS empty ───────▶ Warning MissingClusterDNS on the node and the pod,
//	           │                              then as Default
//	           └─ Default, ClusterFirst with hostNetwork
//	                                  ──────▶ the base as it is; with resolvConf "" the node's
//	                                          loopback (127.0.0.1 / ::1) and search "."
//	then spec.dnsConfig: its nameservers and searches appended (duplicates dropped), its options
//	merged by name; then the limits — at most 3 nameservers, 32 search domains, each at most 253
//	characters, 2048 in all — cut with a Warning DNSConfigForming Event on the pod.
//
// Simplified compared to upstream: options keep their order (upstream goes through a map, so its
// order varies run to run); no Windows resolver; no containerized mounter.
//
// Invariant: PodDNS never fails for a pod's own spec — the API server has validated dnsConfig —
// only when the node's resolvConf cannot be read; the sandbox is then not created, as upstream.
package dns

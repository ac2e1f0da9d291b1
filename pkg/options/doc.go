// Package options turns the command line and a KubeletConfiguration file into validated Options.
//
// Upstream counterparts: cmd/kubelet/app/options/options.go (KubeletFlags: identity and files,
// command line only) and pkg/kubelet/apis/config (KubeletConfiguration: behaviour, file or flag).
// As upstream, a flag given on the command line wins over the file: the file is loaded onto the
// defaults, then the config-backed flags the user set are applied again on top.
//
// Node allocatable and cgroups (resources.go): kubeReserved, systemReserved (--kube-reserved,
// --system-reserved: cpu, memory, ephemeral-storage, pid) and evictionHard (--eviction-hard)
// are parsed into Options.NodeReserved, a bad quantity or signal being an error that names the
// field; evictionHard defaults to upstream's memory.available<100Mi, nodefs.available<10%,
// nodefs.inodesFree<5%, imagefs.available<15%, imagefs.inodesFree<5% when not set (also
// without a config file, where the real kubelet has none), and mergeDefaultEvictionSettings
// fills in what it does not name. cgroupDriver (--cgroup-driver) must be cgroupfs: the systemd
// driver is refused.
//
// The node's second listener and the pods' DNS (config.go): healthzBindAddress and healthzPort
// (--healthz-bind-address, --healthz-port; 127.0.0.1:10248, 0 turns /healthz off), clusterDNS
// (--cluster-dns, IPs only), clusterDomain (--cluster-domain) and resolvConf (--resolv-conf,
// default /etc/resolv.conf, "" for none), defaulted as upstream's v1beta1. kubeadm's own
// config.yaml loads as written (testdata/kubeadm-config.yaml; docs/kubeadm.md lists each field).
//
// Feature gates (features.go; upstream pkg/features/kube_features.go): --feature-gates
// Name=true,… and the file's featureGates, the command line winning gate by gate (a gate it does
// not name keeps the file's value, as upstream's kubeletConfigFlagPrecedence merges them);
// FeatureEnabled reads one. A value that is not a boolean is an error.
//
// Simplified: only the v1beta1 fields minikubelet acts on are defaulted and validated; every other
// known field is accepted and reported once as ignored (so a real kubelet's config loads), while a
// field unknown to v1beta1 is an error, because a typo should not pass silently. Only the feature
// gates minikubelet implements are known — today EventedPLEG (alpha, off by default, as upstream
// v1.36) — and any other gate name is refused with the list of known ones, where upstream knows
// all of its gates (AllAlpha and AllBeta included) and most do nothing here.
package options

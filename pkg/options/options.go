package options

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	cliflag "k8s.io/component-base/cli/flag"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/cm"
	"github.com/minikubelet/minikubelet/pkg/eviction"
)

// Flags are the command-line-only settings, as upstream's KubeletFlags: where the node's identity,
// credentials and files are. Settings that also exist in the config file live in Config instead.
type Flags struct {
	BootstrapKubeconfig      string            // --bootstrap-kubeconfig: token kubeconfig for TLS bootstrap
	Kubeconfig               string            // --kubeconfig: written by bootstrap; used when it holds a valid cert
	CertDir                  string            // --cert-dir: client and serving certificates
	RootDir                  string            // --root-dir: everything the kubelet keeps on disk
	HostnameOverride         string            // --hostname-override: the node name
	NodeIP                   string            // --node-ip: the InternalIP address
	NodeLabels               map[string]string // --node-labels
	RegisterWithTaints       []string          // --register-with-taints key=value:Effect
	ContainerRuntimeEndpoint string            // --container-runtime-endpoint
	ConfigFile               string            // --config: a KubeletConfiguration v1beta1 file

	// minikubelet's own flags (no upstream equivalent).
	BootstrapTimeout   time.Duration     // --bootstrap-timeout: how long to wait for the CSR to be issued
	ClientCertDuration time.Duration     // --client-cert-duration: requested lifetime (CSR expirationSeconds)
	NodeCapacity       map[string]string // --node-capacity cpu=4,memory=8Gi,…: fake machine size
	DebugKeepalive     bool              // --debug-keepalive: a child renews the Lease while we sit at a breakpoint
	DebugAddress       string            // --debug-address: the journal without authentication, on loopback only ("" = off)
	Nodes              int               // --nodes: how many node agents this process runs (1 = an ordinary kubelet)
	NodeNamePrefix     string            // --node-name-prefix: with --nodes > 1, node i is named <prefix><i>
}

// Options is everything `minikubelet` runs with once flags and file are merged and validated.
type Options struct {
	Flags
	Config kubeletconfig.KubeletConfiguration

	// Derived and validated.
	NodeName string
	Taints   []corev1.Taint
	Capacity corev1.ResourceList // only the resources given with --node-capacity
	// NodeReserved is what the node keeps from its pods: kubeReserved, systemReserved and the
	// evictionHard thresholds, parsed (resources.go).
	NodeReserved cm.NodeConfig
	// EvictionThresholds are evictionHard and evictionSoft with their grace periods and minimum
	// reclaims, parsed for the eviction manager (resources.go).
	EvictionThresholds []eviction.Threshold
	// IgnoredConfigFields are the config-file fields minikubelet reads but does not implement.
	IgnoredConfigFields []string
}

// configFlags binds the flags that mirror config-file fields. They are bound to a throw-away
// KubeletConfiguration: after the file is loaded, the flags the user set are applied on top of it,
// so the command line wins over the file, as upstream.
func configFlags(fs *pflag.FlagSet, c *kubeletconfig.KubeletConfiguration) {
	fs.StringVar(&c.Address, "address", c.Address, "IP address to serve the kubelet API on (config: address)")
	fs.Int32Var(&c.Port, "port", c.Port, "port to serve the kubelet API on (config: port)")
	fs.Int32Var(&c.MaxPods, "max-pods", c.MaxPods, "number of pods that can run on this node (config: maxPods)")
	fs.StringVar(&c.PodLogsDir, "pod-logs-dir", c.PodLogsDir, "directory for container logs, <dir>/<namespace>_<pod>_<uid>/<container>/<restart>.log (config: podLogsDir; default <root-dir>/pod-logs)")
	fs.StringVar(&c.StaticPodPath, "pod-manifest-path", c.StaticPodPath, "directory of static pod manifests (config: staticPodPath)")
	fs.StringVar(&c.PodCIDR, "pod-cidr", c.PodCIDR, "IPv4 range the built-in fake runtime gives pod IPs from, /30 or larger (config: podCIDR; default 127.88.0.0/16: loopback, so probes and curl reach what a fake container serves without touching the host's network; outside 127.0.0.0/8 fake containers cannot serve; a real runtime's CNI chooses its own)")
	fs.DurationVar(&c.NodeStatusUpdateFrequency.Duration, "node-status-update-frequency", c.NodeStatusUpdateFrequency.Duration, "how often the node status is computed (config: nodeStatusUpdateFrequency)")
	fs.DurationVar(&c.RuntimeRequestTimeout.Duration, "runtime-request-timeout", c.RuntimeRequestTimeout.Duration, "timeout of CRI calls (config: runtimeRequestTimeout)")
	fs.BoolVar(&c.RotateCertificates, "rotate-certificates", c.RotateCertificates, "rotate the client certificate before it expires (config: rotateCertificates)")
	fs.BoolVar(&c.ServerTLSBootstrap, "rotate-server-certificates", c.ServerTLSBootstrap, "get the kubelet API's serving certificate from a kubernetes.io/kubelet-serving CSR (approved by an admin) and rotate it, instead of a self-signed one (config: serverTLSBootstrap)")
	// Node allocatable and cgroups (resources.go).
	fs.Var(cliflag.NewMapStringString(&c.KubeReserved), "kube-reserved", "resources kept from pods for the kubelet and the runtime, e.g. cpu=100m,memory=500Mi,ephemeral-storage=1Gi,pid=1000 (config: kubeReserved)")
	fs.Var(cliflag.NewMapStringString(&c.SystemReserved), "system-reserved", "resources kept from pods for the OS, e.g. cpu=100m,memory=500Mi (config: systemReserved)")
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&c.EvictionHard), "eviction-hard", "hard eviction thresholds, e.g. memory.available<100Mi,nodefs.available<10%; memory.available and nodefs.available are kept from pods' allocatable (config: evictionHard; default memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%,imagefs.inodesFree<5%)")
	// The eviction manager (resources.go, pkg/eviction).
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&c.EvictionSoft), "eviction-soft", "soft eviction thresholds, e.g. memory.available<1.5Gi: pods are evicted once one holds for its grace period (config: evictionSoft)")
	fs.Var(cliflag.NewMapStringString(&c.EvictionSoftGracePeriod), "eviction-soft-grace-period", "how long each soft threshold must hold before pods are evicted, e.g. memory.available=1m30s (config: evictionSoftGracePeriod)")
	fs.DurationVar(&c.VolumeStatsAggPeriod.Duration, "volume-stats-agg-period", c.VolumeStatsAggPeriod.Duration, "how often pods' volumes are measured for /stats/summary, emptyDir sizeLimit evictions and kubelet_volume_stats_*; negative turns it off (config: volumeStatsAggPeriod)")
	fs.DurationVar(&c.EvictionPressureTransitionPeriod.Duration, "eviction-pressure-transition-period", c.EvictionPressureTransitionPeriod.Duration, "how long a pressure condition stays True after its threshold was last met (config: evictionPressureTransitionPeriod)")
	fs.Int32Var(&c.EvictionMaxPodGracePeriod, "eviction-max-pod-grace-period", c.EvictionMaxPodGracePeriod, "the most seconds a pod evicted for a soft threshold gets to stop; a pod's shorter terminationGracePeriodSeconds wins, and it is at least 1 (config: evictionMaxPodGracePeriod)")
	fs.Var(cliflag.NewMapStringString(&c.EvictionMinimumReclaim), "eviction-minimum-reclaim", "how much more than its threshold must be free before a met threshold counts as resolved, e.g. memory.available=500Mi,nodefs.available=5% (config: evictionMinimumReclaim)")
	fs.Int32Var(c.HealthzPort, "healthz-port", *c.HealthzPort, "port of the plain-HTTP /healthz endpoint; 0 turns it off (config: healthzPort)")
	fs.StringVar(&c.HealthzBindAddress, "healthz-bind-address", c.HealthzBindAddress, "IP address /healthz serves on (config: healthzBindAddress)")
	fs.StringSliceVar(&c.ClusterDNS, "cluster-dns", c.ClusterDNS, "DNS server IPs a dnsPolicy: ClusterFirst pod's /etc/resolv.conf names, e.g. 10.96.0.10 (config: clusterDNS)")
	fs.StringVar(&c.ClusterDomain, "cluster-domain", c.ClusterDomain, "the cluster's DNS domain, e.g. cluster.local: a ClusterFirst pod searches <ns>.svc.<domain> svc.<domain> <domain> (config: clusterDomain)")
	fs.StringVar(c.ResolverConfig, "resolv-conf", *c.ResolverConfig, "resolver file that is the base of pods' DNS; \"\" gives dnsPolicy: Default pods nameserver 127.0.0.1 (config: resolvConf)")
	fs.StringVar(&c.CgroupDriver, "cgroup-driver", c.CgroupDriver, "how the runtime is told about cgroups; only cgroupfs (config: cgroupDriver)")
	// Feature gates (features.go).
	fs.Var(featureGatesValue{cliflag.NewMapStringBool(&c.FeatureGates)}, "feature-gates", "feature gates to switch on or off, Name=true|false,… (config: featureGates; a gate the command line does not name keeps the file's value); minikubelet knows only "+strings.Join(KnownFeatures(), ", "))
}

// AddFlags registers every flag on fs and returns the Options they fill. Call Complete after parsing.
func AddFlags(fs *pflag.FlagSet) *Options {
	o := &Options{}
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", "", "kubeconfig with a bootstrap token, used to request a client certificate when --kubeconfig has no valid one")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig to talk to the API server; written by TLS bootstrap (default <root-dir>/kubeconfig)")
	fs.StringVar(&o.CertDir, "cert-dir", "", "directory for the kubelet's certificates (default <root-dir>/pki)")
	fs.StringVar(&o.RootDir, "root-dir", "/var/lib/minikubelet", "directory for the kubelet's files: certificates, pod volumes, logs, the fake runtime socket")
	fs.StringVar(&o.HostnameOverride, "hostname-override", "", "node name to use instead of the hostname")
	fs.StringVar(&o.NodeIP, "node-ip", "", "IP address of the node, reported as InternalIP (default: the host's first non-loopback address)")
	fs.Var(cliflag.NewMapStringString(&o.NodeLabels), "node-labels", "labels to add when registering the node, key=value,…")
	fs.StringSliceVar(&o.RegisterWithTaints, "register-with-taints", nil, "taints to register the node with, key=value:Effect,…")
	fs.StringVar(&o.ContainerRuntimeEndpoint, "container-runtime-endpoint", "", "CRI endpoint, e.g. unix:///run/containerd/containerd.sock (default: the built-in fake runtime)")
	fs.StringVar(&o.ConfigFile, "config", "", "KubeletConfiguration (kubelet.config.k8s.io/v1beta1) file; flags given on the command line override it")
	fs.DurationVar(&o.BootstrapTimeout, "bootstrap-timeout", 5*time.Minute, "how long to wait for the bootstrap CSR to be approved and issued")
	fs.DurationVar(&o.ClientCertDuration, "client-cert-duration", 0, "lifetime to request for client certificates (CSR expirationSeconds, at least 10m); 0 leaves it to the signer")
	fs.StringVar(&o.DebugAddress, "debug-address", "", "serve /debug/journal and /debug/journal/ui without authentication on this loopback address, e.g. 127.0.0.1:10256, for 'minikubelet journal' and a browser on this machine; only 127.0.0.1 or ::1 is accepted (default: off)")
	fs.BoolVar(&o.DebugKeepalive, "debug-keepalive", false, "start a lease-keeper child that renews the node Lease while minikubelet is stopped by a debugger (or SIGSTOP), so the node stays Ready; for debugging only")
	fs.IntVar(&o.Nodes, "nodes", 1, "run this many independent node agents in one process, each with its own TLS-bootstrapped identity, Lease, status, pod workers and built-in fake runtime, its files under <root-dir>/<node-name>/ and its kubelet API on an ephemeral port (for scale tests, as kubemark's hollow nodes)")
	fs.StringVar(&o.NodeNamePrefix, "node-name-prefix", "", "with --nodes > 1, name the nodes <prefix>1 … <prefix>N (default \"<node name>-\")")
	fs.Var(cliflag.NewMapStringString(&o.NodeCapacity), "node-capacity", "report this capacity instead of the machine's, e.g. cpu=4,memory=8Gi,ephemeral-storage=100Gi (for fake nodes)")
	o.Config = DefaultConfig()
	configFlags(fs, &o.Config)
	return o
}

// Complete loads the config file, applies the command-line flags over it, fills defaults that
// depend on other settings, and validates. Every error names the flag or field and how to fix it.
func (o *Options) Complete(fs *pflag.FlagSet) error {
	if o.ConfigFile != "" {
		cfg, ignored, err := LoadConfigFile(o.ConfigFile)
		if err != nil {
			return err
		}
		o.IgnoredConfigFields = ignored
		if err := applySetFlags(fs, &cfg); err != nil {
			return err
		}
		o.Config = cfg
	}
	if o.RootDir == "" {
		return fmt.Errorf("--root-dir must not be empty")
	}
	root, err := filepath.Abs(o.RootDir)
	if err != nil {
		return fmt.Errorf("--root-dir %q: %w", o.RootDir, err)
	}
	o.RootDir = root
	if o.Nodes > 1 {
		// Each node agent derives these under <root-dir>/<node-name>/ (see ForNode); one path for
		// all of them would mix their identities, or let one node's log cleanup delete another's.
		for _, f := range []struct{ name, value string }{
			{"--kubeconfig", o.Kubeconfig}, {"--cert-dir", o.CertDir}, {"--pod-logs-dir (config: podLogsDir)", o.Config.PodLogsDir},
		} {
			if f.value != "" {
				return fmt.Errorf("%s cannot be shared by --nodes %d node agents: drop it, each node keeps its own under <root-dir>/<node-name>/", f.name, o.Nodes)
			}
		}
		// Nor can these: every agent would run every static pod, or hand out the same pod IPs.
		if o.Config.StaticPodPath != "" {
			return fmt.Errorf("--pod-manifest-path (config: staticPodPath) cannot be shared by --nodes %d node agents: each would run every static pod; run static pods on a minikubelet of their own, without --nodes", o.Nodes)
		}
		if o.Config.PodCIDR != "" {
			return fmt.Errorf("podCIDR %s cannot be shared by --nodes %d node agents: drop it, node i gets 127.x.y.0/24 of its own (see ForNode)", o.Config.PodCIDR, o.Nodes)
		}
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.RootDir, "pki")
	}
	if o.Kubeconfig == "" {
		o.Kubeconfig = filepath.Join(o.RootDir, "kubeconfig")
	}
	if o.Config.PodLogsDir == "" {
		o.Config.PodLogsDir = filepath.Join(o.RootDir, "pod-logs")
	}
	if o.ContainerRuntimeEndpoint == "" {
		o.ContainerRuntimeEndpoint = o.Config.ContainerRuntimeEndpoint // the config file's, if any
	}
	o.NodeName = strings.ToLower(strings.TrimSpace(o.HostnameOverride))
	if o.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("find the hostname for the node name: %w; set --hostname-override", err)
		}
		o.NodeName = strings.ToLower(h)
	}
	if o.Nodes > 1 && o.NodeNamePrefix == "" {
		o.NodeNamePrefix = o.NodeName + "-"
	}
	return o.validate()
}

// applySetFlags re-applies the config flags the user set onto the loaded file: the command line
// wins, and a feature gate it does not name keeps the file's value.
func applySetFlags(fs *pflag.FlagSet, cfg *kubeletconfig.KubeletConfiguration) error {
	fileGates := cfg.FeatureGates
	fileFS := pflag.NewFlagSet("config", pflag.ContinueOnError)
	configFlags(fileFS, cfg)
	var setErr error
	fs.Visit(func(f *pflag.Flag) {
		target := fileFS.Lookup(f.Name)
		if target == nil || setErr != nil {
			return
		}
		// A list flag prints as "[a,b]", which its Set would not parse back: copy the list.
		if from, ok := f.Value.(pflag.SliceValue); ok {
			setErr = target.Value.(pflag.SliceValue).Replace(from.GetSlice())
			return
		}
		setErr = fileFS.Set(f.Name, f.Value.String())
	})
	if setErr != nil {
		return setErr
	}
	cfg.FeatureGates = mergeFeatureGates(cfg.FeatureGates, fileGates)
	return nil
}

// NodeNames are the names of the node agents this process runs: the node name, or with
// --nodes N > 1, <prefix>1 … <prefix>N.
func (o *Options) NodeNames() []string {
	if o.Nodes <= 1 {
		return []string{o.NodeName}
	}
	names := make([]string, o.Nodes)
	for i := range names {
		names[i] = o.NodeNamePrefix + strconv.Itoa(i+1)
	}
	return names
}

// ForNode returns the options of node agent i (1 … --nodes) of --nodes: its own name
// (NodeNames()[i-1]), its own root dir <root-dir>/<name>/ with the kubeconfig, certificates, pod
// logs in it, and its own podCIDR for its fake runtime's pod IPs, nodePodCIDR(i); /healthz on
// agent 1 only; the
// EventedPLEG gate on unless set. Everything else is shared, read-only.
func (o *Options) ForNode(i int) *Options {
	n := *o
	n.Nodes, n.NodeName = 1, o.NodeNamePrefix+strconv.Itoa(i)
	n.RootDir = filepath.Join(o.RootDir, n.NodeName)
	n.CertDir = filepath.Join(n.RootDir, "pki")
	n.Kubeconfig = filepath.Join(n.RootDir, "kubeconfig")
	n.Config.PodLogsDir = filepath.Join(n.RootDir, "pod-logs")
	n.Config.PodCIDR = nodePodCIDR(i)
	// One process, one /healthz: node agent 1 serves it, the others would only find it taken.
	if i > 1 {
		n.Config.HealthzPort = ptr.To[int32](0)
	}
	// Idle nodes would relist every second each (1000 nodes: 2000 CRI calls a second): they
	// follow their runtime's container events instead, unless the gate is set either way.
	if _, set := o.Config.FeatureGates[EventedPLEG]; !set {
		n.Config.FeatureGates = maps.Clone(o.Config.FeatureGates)
		if n.Config.FeatureGates == nil {
			n.Config.FeatureGates = map[string]bool{}
		}
		n.Config.FeatureGates[EventedPLEG] = true
	}
	return &n
}

// MaxNodes is the most node agents one process runs: each gets a /24 of 127.88.0.0 –
// 127.255.255.0.
const MaxNodes = (256 - 88) * 256

// nodePodCIDR is node agent i's pod range: the i-th /24 after 127.88.0.0 (node 1:
// 127.88.1.0/24, node 256: 127.89.0.0/24), so pods on different nodes never share an IP. It is
// loopback, like the fake runtime's default, so their containers can serve. Pure.
func nodePodCIDR(i int) string {
	return fmt.Sprintf("127.%d.%d.0/24", 88+i/256, i%256)
}

func (o *Options) validate() error {
	if o.Nodes < 1 || o.Nodes >= MaxNodes {
		return fmt.Errorf("--nodes %d: give 1 (an ordinary kubelet) up to %d node agents", o.Nodes, MaxNodes-1)
	}
	if o.Nodes > 1 {
		if o.BootstrapKubeconfig == "" {
			return fmt.Errorf("--nodes %d needs --bootstrap-kubeconfig: each node agent gets its own client certificate (system:node:<name>) by TLS bootstrap", o.Nodes)
		}
		if o.ContainerRuntimeEndpoint != "" {
			return fmt.Errorf("--nodes %d runs each node agent on a built-in fake runtime of its own: drop --container-runtime-endpoint %s (node agents sharing one runtime would remove each other's containers)", o.Nodes, o.ContainerRuntimeEndpoint)
		}
		if o.DebugAddress != "" || o.DebugKeepalive {
			return fmt.Errorf("--debug-address and --debug-keepalive serve one node: run that node as its own minikubelet, without --nodes")
		}
		last := o.NodeNames()[o.Nodes-1]
		if errs := validation.IsDNS1123Subdomain(last); len(errs) > 0 {
			return fmt.Errorf("--node-name-prefix %q gives node names like %q, which is not a valid DNS subdomain (%s): use a lowercase prefix like fake-", o.NodeNamePrefix, last, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(o.NodeName); len(errs) > 0 {
		return fmt.Errorf("node name %q is not a valid DNS subdomain (%s): set --hostname-override to a lowercase name like node-1", o.NodeName, strings.Join(errs, "; "))
	}
	if o.NodeIP != "" && net.ParseIP(o.NodeIP) == nil {
		return fmt.Errorf("--node-ip %q is not an IP address: give one like 192.168.1.10", o.NodeIP)
	}
	if err := validateNodeLabels(o.NodeLabels); err != nil {
		return err
	}
	taints, err := parseTaints(o.RegisterWithTaints)
	if err != nil {
		return err
	}
	o.Taints = taints
	o.Capacity = corev1.ResourceList{}
	for name, value := range o.NodeCapacity {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("--node-capacity %s=%q: %v; use quantities like cpu=4,memory=8Gi", name, value, err)
		}
		o.Capacity[corev1.ResourceName(name)] = q
	}
	if o.BootstrapTimeout <= 0 {
		return fmt.Errorf("--bootstrap-timeout must be positive, got %s", o.BootstrapTimeout)
	}
	if o.DebugAddress != "" {
		if err := journal.CheckLoopback(o.DebugAddress); err != nil {
			return fmt.Errorf("--debug-address %w", err)
		}
	}
	if o.ClientCertDuration != 0 && o.ClientCertDuration < 10*time.Minute {
		return fmt.Errorf("--client-cert-duration %s is shorter than the 10m the API server accepts for a CSR: use 10m or more, or 0 for the signer's default", o.ClientCertDuration)
	}
	if err := ValidateConfig(&o.Config); err != nil {
		return err
	}
	if o.NodeReserved, err = nodeReserved(&o.Config); err != nil {
		return err
	}
	o.EvictionThresholds, err = evictionThresholds(&o.Config)
	return err
}

// allowedKubernetesLabels are the labels in the kubernetes.io/k8s.io namespaces that a kubelet may
// set on its own Node; the NodeRestriction admission plugin rejects the others.
var allowedKubernetesLabels = map[string]bool{
	"kubernetes.io/hostname": true, "kubernetes.io/os": true, "kubernetes.io/arch": true,
	"beta.kubernetes.io/os": true, "beta.kubernetes.io/arch": true, "beta.kubernetes.io/instance-type": true,
	"node.kubernetes.io/instance-type": true, "failure-domain.beta.kubernetes.io/zone": true,
	"failure-domain.beta.kubernetes.io/region": true, "topology.kubernetes.io/zone": true, "topology.kubernetes.io/region": true,
}

func validateNodeLabels(labels map[string]string) error {
	for k, v := range labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--node-labels: key %q is invalid: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("--node-labels: value %q of %q is invalid: %s", v, k, strings.Join(errs, "; "))
		}
		prefix, _, found := strings.Cut(k, "/")
		if !found || allowedKubernetesLabels[k] {
			continue
		}
		restricted := prefix == "kubernetes.io" || strings.HasSuffix(prefix, ".kubernetes.io") || prefix == "k8s.io" || strings.HasSuffix(prefix, ".k8s.io")
		allowedPrefix := prefix == "kubelet.kubernetes.io" || strings.HasSuffix(prefix, ".kubelet.kubernetes.io") ||
			prefix == "node.kubernetes.io" || strings.HasSuffix(prefix, ".node.kubernetes.io")
		if restricted && !allowedPrefix {
			return fmt.Errorf("--node-labels: %q is in a kubernetes.io/k8s.io namespace a node may not set on itself (NodeRestriction); "+
				"use a node.kubernetes.io/ or your own prefix, or have an admin label the node (e.g. node-role.kubernetes.io/…)", k)
		}
	}
	return nil
}

// parseTaints parses key=value:Effect or key:Effect, as upstream's --register-with-taints.
func parseTaints(specs []string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	for _, spec := range specs {
		kv, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("--register-with-taints %q: missing effect; write key=value:NoSchedule (or PreferNoSchedule, NoExecute)", spec)
		}
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("--register-with-taints %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", spec, effect)
		}
		key, value, _ := strings.Cut(kv, "=")
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, fmt.Errorf("--register-with-taints %q: key %q is invalid: %s", spec, key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, fmt.Errorf("--register-with-taints %q: value %q is invalid: %s", spec, value, strings.Join(errs, "; "))
		}
		taints = append(taints, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	return taints, nil
}

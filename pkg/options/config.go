package options

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const (
	configAPIVersion = "kubelet.config.k8s.io/v1beta1"
	configKind       = "KubeletConfiguration"
)

// DefaultConfig returns the KubeletConfiguration defaults for the fields minikubelet implements,
// the same values as upstream's v1beta1 defaulting (pkg/kubelet/apis/config/v1beta1/defaults.go),
// with one deliberate difference: rotateCertificates defaults to true, as kubeadm configures it.
func DefaultConfig() kubeletconfig.KubeletConfiguration {
	c := kubeletconfig.KubeletConfiguration{}
	c.APIVersion, c.Kind = configAPIVersion, configKind
	c.RotateCertificates = true
	applyDefaults(&c) // evictionHard as a config file that does not set it (resources.go)
	return c
}

// applyDefaults fills zero values, as upstream defaulting does after decoding.
func applyDefaults(c *kubeletconfig.KubeletConfiguration) {
	if c.Address == "" {
		c.Address = "0.0.0.0"
	}
	if c.Port == 0 {
		c.Port = 10250
	}
	if c.MaxPods == 0 {
		c.MaxPods = 110
	}
	if c.NodeLeaseDurationSeconds == 0 {
		c.NodeLeaseDurationSeconds = 40
	}
	if c.KubeAPIQPS == nil {
		qps := int32(50)
		c.KubeAPIQPS = &qps
	}
	if c.KubeAPIBurst == 0 {
		c.KubeAPIBurst = 100
	}
	// Events have a client and a rate limit of their own, so a burst of Events never delays a
	// pod's status (0 is client-go's default, 5 per second and a burst of 10, as upstream).
	if c.EventRecordQPS == nil {
		c.EventRecordQPS = ptr.To[int32](50)
	}
	if c.EventBurst == 0 {
		c.EventBurst = 100
	}
	if c.EnableProfilingHandler == nil {
		c.EnableProfilingHandler = ptr.To(true) // /debug/pprof on the kubelet API, behind authn/authz
	}
	// The kubelet API's authentication and authorization (upstream v1beta1 defaults): no anonymous
	// requests, bearer tokens checked by TokenReview, every request authorized by SubjectAccessReview.
	if c.Authentication.Anonymous.Enabled == nil {
		c.Authentication.Anonymous.Enabled = ptr.To(false)
	}
	if c.Authentication.Webhook.Enabled == nil {
		c.Authentication.Webhook.Enabled = ptr.To(true)
	}
	if c.Authorization.Mode == "" {
		c.Authorization.Mode = kubeletconfig.KubeletAuthorizationModeWebhook
	}
	defaultHealthzAndDNS(c)
	if c.CgroupDriver == "" {
		c.CgroupDriver = cgroupDriverCgroupfs
	}
	if c.LocalStorageCapacityIsolation == nil {
		c.LocalStorageCapacityIsolation = ptr.To(true) // pods over their ephemeral-storage limits are evicted
	}
	defaultEvictionHard(c) // upstream's Linux thresholds when unset, or merged into the file's (resources.go)
	if c.ConfigMapAndSecretChangeDetectionStrategy == "" {
		c.ConfigMapAndSecretChangeDetectionStrategy = kubeletconfig.WatchChangeDetectionStrategy
	}
	for _, d := range []struct {
		field *metav1.Duration
		def   time.Duration
	}{
		{&c.NodeStatusUpdateFrequency, 10 * time.Second},
		{&c.NodeStatusReportFrequency, 5 * time.Minute},
		{&c.RuntimeRequestTimeout, 2 * time.Minute},
		{&c.SyncFrequency, time.Minute},
		{&c.FileCheckFrequency, 20 * time.Second},
		{&c.EvictionPressureTransitionPeriod, 5 * time.Minute},
		{&c.VolumeStatsAggPeriod, time.Minute}, // negative: no volume stats (upstream's fsResourceAnalyzer)
		{&c.Authentication.Webhook.CacheTTL, 2 * time.Minute},
		{&c.Authorization.Webhook.CacheAuthorizedTTL, 5 * time.Minute},
		{&c.Authorization.Webhook.CacheUnauthorizedTTL, 30 * time.Second},
	} {
		if d.field.Duration == 0 {
			d.field.Duration = d.def
		}
	}
}

// defaultHealthzAndDNS fills the plain-HTTP /healthz listener (cmd/kubelet/app/server.go: on
// loopback, 10248; 0 turns it off) and the node's resolver file, the base of a pod's DNS
// (resolvConf; "" means none), as upstream's v1beta1 defaults.
func defaultHealthzAndDNS(c *kubeletconfig.KubeletConfiguration) {
	if c.HealthzBindAddress == "" {
		c.HealthzBindAddress = "127.0.0.1"
	}
	if c.HealthzPort == nil {
		c.HealthzPort = ptr.To[int32](10248)
	}
	if c.ResolverConfig == nil {
		c.ResolverConfig = ptr.To("/etc/resolv.conf")
	}
}

// implementedFields are the top-level KubeletConfiguration fields minikubelet acts on. Others are
// accepted (so a real kubelet's config file loads) and logged once as ignored.
var implementedFields = map[string]bool{
	"apiVersion": true, "kind": true,
	"address": true, "port": true, "maxPods": true, "staticPodPath": true,
	"nodeStatusUpdateFrequency": true, "nodeStatusReportFrequency": true, "nodeLeaseDurationSeconds": true,
	"runtimeRequestTimeout": true, "rotateCertificates": true, "serverTLSBootstrap": true, "kubeAPIQPS": true, "kubeAPIBurst": true,
	"eventRecordQPS": true, "eventBurst": true,
	"containerRuntimeEndpoint": true, "podLogsDir": true, "syncFrequency": true, "fileCheckFrequency": true,
	"configMapAndSecretChangeDetectionStrategy": true, "authentication": true, "authorization": true,
	"enableProfilingHandler": true, "podCIDR": true, "featureGates": true, "clusterDomain": true, "clusterDNS": true, "resolvConf": true,
	"healthzBindAddress": true, "healthzPort": true,
	"kubeReserved": true, "systemReserved": true, "evictionHard": true, "mergeDefaultEvictionSettings": true, "cgroupDriver": true,
	"evictionSoft": true, "evictionSoftGracePeriod": true, "evictionPressureTransitionPeriod": true, "evictionMaxPodGracePeriod": true,
	"evictionMinimumReclaim": true, "localStorageCapacityIsolation": true, "volumeStatsAggPeriod": true,
}

// LoadConfigFile reads a KubeletConfiguration v1beta1 file. Fields it does not know at all are an
// error (a typo must not pass silently); fields it knows but does not implement are returned as
// ignored. Omitted fields keep their defaults.
func LoadConfigFile(path string) (kubeletconfig.KubeletConfiguration, []string, error) {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, nil, fmt.Errorf("--config: cannot read %s: %w", path, err)
	}
	var typeMeta metav1.TypeMeta
	if err := yaml.Unmarshal(data, &typeMeta); err != nil {
		return cfg, nil, fmt.Errorf("--config %s is not valid YAML: %w", path, cleanYAMLError(err))
	}
	if typeMeta.APIVersion != configAPIVersion || typeMeta.Kind != configKind {
		return cfg, nil, fmt.Errorf("--config %s: want apiVersion %s and kind %s, got apiVersion %q kind %q",
			path, configAPIVersion, configKind, typeMeta.APIVersion, typeMeta.Kind)
	}
	cfg.EvictionHard = nil // the file's, or the defaults if it has none; never merged into them by the decoder
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return cfg, nil, fmt.Errorf("--config %s: %w (check the field names against kubelet.config.k8s.io/v1beta1)", path, cleanYAMLError(err))
	}
	applyDefaults(&cfg)
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return cfg, nil, fmt.Errorf("--config %s: %w", path, cleanYAMLError(err))
	}
	var ignored []string
	for k := range fields {
		if !implementedFields[k] {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	if err := ValidateConfig(&cfg); err != nil {
		return cfg, ignored, fmt.Errorf("--config %s: %w", path, err)
	}
	return cfg, ignored, nil
}

// cleanYAMLError drops the decoders' prefixes and puts the error on one line: the YAML decoder
// lists some problems on indented lines of their own ("yaml: unmarshal errors:\n  line 4: key
// \"maxPods\" already set in map"), and minikubelet reports every bad input in one line.
func cleanYAMLError(err error) error {
	msg := err.Error()
	for _, prefix := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: while decoding JSON: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return errors.New(strings.ReplaceAll(strings.Join(parts, "; "), ":; ", ": "))
}

// ValidateConfig checks the fields minikubelet implements. Each message names the field (and its flag).
func ValidateConfig(c *kubeletconfig.KubeletConfiguration) error {
	var errs []string
	if c.Port < 1 || c.Port > 65535 {
		errs = append(errs, fmt.Sprintf("port (--port) must be 1..65535, got %d", c.Port))
	}
	if net.ParseIP(c.Address) == nil { // as the kubelet API server parses it: no spaces around it
		errs = append(errs, fmt.Sprintf("address (--address) %q is not an IP address", c.Address))
	}
	if c.MaxPods < 1 {
		errs = append(errs, fmt.Sprintf("maxPods (--max-pods) must be at least 1, got %d", c.MaxPods))
	}
	if c.NodeStatusUpdateFrequency.Duration <= 0 {
		errs = append(errs, "nodeStatusUpdateFrequency (--node-status-update-frequency) must be positive")
	}
	if c.NodeStatusReportFrequency.Duration < c.NodeStatusUpdateFrequency.Duration {
		errs = append(errs, fmt.Sprintf("nodeStatusReportFrequency (%s) must not be shorter than nodeStatusUpdateFrequency (%s)",
			c.NodeStatusReportFrequency.Duration, c.NodeStatusUpdateFrequency.Duration))
	}
	if c.NodeLeaseDurationSeconds < 4 {
		errs = append(errs, fmt.Sprintf("nodeLeaseDurationSeconds must be at least 4 (the lease is renewed every quarter of it), got %d", c.NodeLeaseDurationSeconds))
	}
	if c.RuntimeRequestTimeout.Duration <= 0 {
		errs = append(errs, "runtimeRequestTimeout (--runtime-request-timeout) must be positive")
	}
	if c.KubeAPIQPS != nil && *c.KubeAPIQPS < 0 {
		errs = append(errs, "kubeAPIQPS must not be negative")
	}
	if c.KubeAPIBurst < 0 {
		errs = append(errs, "kubeAPIBurst must not be negative")
	}
	if c.EventRecordQPS != nil && *c.EventRecordQPS < 0 {
		errs = append(errs, "eventRecordQPS must not be negative")
	}
	if c.EventBurst < 0 {
		errs = append(errs, "eventBurst must not be negative")
	}
	switch c.Authorization.Mode {
	case kubeletconfig.KubeletAuthorizationModeWebhook, kubeletconfig.KubeletAuthorizationModeAlwaysAllow:
	default:
		errs = append(errs, fmt.Sprintf("authorization.mode %q must be Webhook or AlwaysAllow", c.Authorization.Mode))
	}
	switch c.ConfigMapAndSecretChangeDetectionStrategy {
	case kubeletconfig.GetChangeDetectionStrategy, kubeletconfig.TTLCacheChangeDetectionStrategy, kubeletconfig.WatchChangeDetectionStrategy:
	default:
		errs = append(errs, fmt.Sprintf("configMapAndSecretChangeDetectionStrategy %q must be Get, Cache or Watch", c.ConfigMapAndSecretChangeDetectionStrategy))
	}
	if c.SyncFrequency.Duration <= 0 {
		errs = append(errs, "syncFrequency must be positive")
	}
	if c.PodCIDR != "" {
		if p, err := netip.ParsePrefix(c.PodCIDR); err != nil || !p.Addr().Is4() || p.Bits() > 30 {
			errs = append(errs, fmt.Sprintf("podCIDR (--pod-cidr) %q must be an IPv4 range of /30 or larger, like 127.88.0.0/16", c.PodCIDR))
		}
	}
	if c.FileCheckFrequency.Duration <= 0 {
		errs = append(errs, "fileCheckFrequency must be positive")
	}
	for _, ttl := range []struct {
		field string
		value time.Duration
	}{
		{"authentication.webhook.cacheTTL", c.Authentication.Webhook.CacheTTL.Duration},
		{"authorization.webhook.cacheAuthorizedTTL", c.Authorization.Webhook.CacheAuthorizedTTL.Duration},
		{"authorization.webhook.cacheUnauthorizedTTL", c.Authorization.Webhook.CacheUnauthorizedTTL.Duration},
	} {
		if ttl.value < 0 {
			errs = append(errs, fmt.Sprintf("%s must not be negative, got %s", ttl.field, ttl.value))
		}
	}
	errs = append(errs, validateHealthzAndDNS(c)...)
	errs = append(errs, validateResources(c)...)
	errs = append(errs, validateFeatureGates(c.FeatureGates)...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

// validateHealthzAndDNS checks healthzPort (0 turns it off), healthzBindAddress and clusterDNS.
func validateHealthzAndDNS(c *kubeletconfig.KubeletConfiguration) []string {
	var errs []string
	if c.HealthzPort != nil && (*c.HealthzPort < 0 || *c.HealthzPort > 65535) {
		errs = append(errs, fmt.Sprintf("healthzPort (--healthz-port) %d must be between 1 and 65535, inclusive (0 turns /healthz off)", *c.HealthzPort))
	}
	if net.ParseIP(c.HealthzBindAddress) == nil {
		errs = append(errs, fmt.Sprintf("healthzBindAddress (--healthz-bind-address) %q is not an IP address: give one like 127.0.0.1", c.HealthzBindAddress))
	}
	for _, ip := range c.ClusterDNS {
		// Upstream logs "Invalid clusterDNS IP" and drops it; a pod's resolv.conf would then
		// silently lack a server, so minikubelet refuses it.
		if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Sprintf("clusterDNS (--cluster-dns) %q is not an IP address: give the cluster DNS Service's ClusterIP, like 10.96.0.10", ip))
		}
	}
	return errs
}

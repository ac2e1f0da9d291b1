package dns

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// unique drops repeated entries, keeping the first of each. Pure.
func unique(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// optionName is an option's name: "ndots" of "ndots:5".
func optionName(o string) string {
	name, _, _ := strings.Cut(o, ":")
	return name
}

// setOption sets o in options: it replaces the option of the same name in place, or is
// appended. Pure.
func setOption(options []string, o string) []string {
	for i, old := range options {
		if optionName(old) == optionName(o) {
			options[i] = o
			return options
		}
	}
	return append(options, o)
}

// mergeOptions applies a pod's dnsConfig.options over the base's, by name (upstream
// mergeDNSOptions; "name" alone for an option without a value). Pure.
func mergeOptions(base []string, pod []corev1.PodDNSConfigOption) []string {
	out := append([]string{}, base...)
	for _, o := range pod {
		opt := o.Name
		if o.Value != nil && *o.Value != "" {
			opt += ":" + *o.Value
		}
		out = setOption(out, opt)
	}
	return out
}

// fitLimits cuts nameservers to 3 and the search list to 32 domains of at most 253 characters
// and 2048 characters in all (dropping from the end), and says what it did, in upstream's
// words, for the pod's DNSConfigForming Event. Pure.
func fitLimits(servers, searches []string) ([]string, []string, []string) {
	var warnings []string
	if len(servers) > maxNameservers {
		servers = servers[:maxNameservers]
		warnings = append(warnings, "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "+strings.Join(servers, " "))
	}
	cut := false
	if len(searches) > maxSearchPaths {
		searches, cut = searches[:maxSearchPaths], true
	}
	var kept []string
	for _, s := range searches {
		if len(s) > maxSearchPathChars {
			cut = true
			continue
		}
		kept = append(kept, s)
	}
	for len(kept) > 0 && len(strings.Join(kept, " ")) > maxSearchListChars {
		kept, cut = kept[:len(kept)-1], true
	}
	if cut {
		warnings = append(warnings, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: "+strings.Join(kept, " "))
	}
	return servers, kept, warnings
}

// CheckLimitsForResolvConf warns once, at start, with a Warning CheckLimitsForResolvConf Event on
// the node, when the node's resolvConf cannot be read or its search line leaves no room for the
// cluster's three domains within the limits (upstream Configurer.CheckLimitsForResolvConf).
func (c *Configurer) CheckLimitsForResolvConf(ctx context.Context) {
	if c.ResolverConfig == "" {
		return
	}
	logger := klog.FromContext(ctx)
	if msg := c.resolvConfProblem(); msg != "" {
		c.Recorder.Event(c.NodeRef, corev1.EventTypeWarning, ReasonCheckLimits, msg)
		logger.V(4).Info("Check limits for resolv.conf failed", "eventlog", msg)
	}
}

// resolvConfProblem is what CheckLimitsForResolvConf reports, or "".
func (c *Configurer) resolvConfProblem() string {
	f, err := os.Open(c.ResolverConfig)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	_, searches, _, err := parseResolvConf(f)
	if err != nil {
		return err.Error()
	}
	limit := maxSearchPaths
	if c.ClusterDomain != "" {
		limit -= 3
	}
	if len(searches) > limit {
		return fmt.Sprintf("Resolv.conf file '%s' contains search line consisting of more than %d domains!", c.ResolverConfig, limit)
	}
	for _, s := range searches {
		if len(s) > maxSearchPathChars {
			return fmt.Sprintf("Resolv.conf file %q contains a search path which length is more than allowed %d chars!", c.ResolverConfig, maxSearchPathChars)
		}
	}
	if len(strings.Join(searches, " ")) > maxSearchListChars {
		return fmt.Sprintf("Resolv.conf file '%s' contains search line which length is more than allowed %d chars!", c.ResolverConfig, maxSearchListChars)
	}
	return ""
}

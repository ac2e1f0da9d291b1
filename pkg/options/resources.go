package options

// The settings of node allocatable, eviction and cgroups: kubeReserved, systemReserved,
// evictionHard (with mergeDefaultEvictionSettings), evictionSoft, evictionSoftGracePeriod,
// evictionMinimumReclaim, evictionPressureTransitionPeriod, evictionMaxPodGracePeriod,
// localStorageCapacityIsolation and cgroupDriver (upstream: cmd/kubelet/app/server.go
// loadConfigFile, which defaults evictionHard, and parseResourceList;
// pkg/kubelet/eviction/helpers.go ParseThresholdConfig;
// pkg/kubelet/apis/config/validation/validation.go for the cgroup driver).

import (
	"fmt"

	kubeletconfig "k8s.io/kubelet/config/v1beta1"

	"github.com/minikubelet/minikubelet/pkg/cm"
	"github.com/minikubelet/minikubelet/pkg/eviction"
)

const cgroupDriverCgroupfs = "cgroupfs"

// defaultEvictionHard gives evictionHard upstream's Linux defaults when it is not set; with
// mergeDefaultEvictionSettings, the defaults fill in the signals it does not name. Upstream
// does this when it loads a config file; minikubelet also without one, as if from an empty file
// (the real kubelet started with flags alone has no thresholds at all).
func defaultEvictionHard(c *kubeletconfig.KubeletConfiguration) {
	if c.EvictionHard == nil {
		c.EvictionHard = cm.DefaultEvictionHard()
		return
	}
	if c.MergeDefaultEvictionSettings != nil && *c.MergeDefaultEvictionSettings {
		for signal, value := range cm.DefaultEvictionHard() {
			if _, ok := c.EvictionHard[signal]; !ok {
				c.EvictionHard[signal] = value
			}
		}
	}
}

// validateResources checks the fields of this file; each message names the field and its flag.
func validateResources(c *kubeletconfig.KubeletConfiguration) []string {
	var errs []string
	if _, err := nodeReserved(c); err != nil {
		errs = append(errs, err.Error())
	} else if _, err := evictionThresholds(c); err != nil {
		errs = append(errs, err.Error())
	}
	if c.EvictionPressureTransitionPeriod.Duration < 0 {
		errs = append(errs, fmt.Sprintf("evictionPressureTransitionPeriod (--eviction-pressure-transition-period) must not be negative, got %s",
			c.EvictionPressureTransitionPeriod.Duration))
	}
	if c.CgroupDriver != cgroupDriverCgroupfs {
		errs = append(errs, fmt.Sprintf("cgroupDriver (--cgroup-driver) %q is not supported: minikubelet only has the cgroupfs driver; "+
			"set cgroupDriver: cgroupfs (or drop it) and run the runtime with cgroupfs too (containerd: SystemdCgroup = false)", c.CgroupDriver))
	}
	return errs
}

// nodeReserved parses kubeReserved, systemReserved and evictionHard.
func nodeReserved(c *kubeletconfig.KubeletConfiguration) (cm.NodeConfig, error) {
	var nc cm.NodeConfig
	var err error
	if nc.KubeReserved, err = cm.ParseReserved(c.KubeReserved); err != nil {
		return nc, fmt.Errorf("kubeReserved (--kube-reserved): %w", err)
	}
	if nc.SystemReserved, err = cm.ParseReserved(c.SystemReserved); err != nil {
		return nc, fmt.Errorf("systemReserved (--system-reserved): %w", err)
	}
	if nc.HardEvictionThresholds, err = cm.ParseEvictionHard(c.EvictionHard); err != nil {
		return nc, fmt.Errorf("evictionHard (--eviction-hard): %w", err)
	}
	return nc, nil
}

// evictionThresholds parses the eviction manager's thresholds: evictionHard and evictionSoft,
// with evictionSoftGracePeriod and evictionMinimumReclaim.
func evictionThresholds(c *kubeletconfig.KubeletConfiguration) ([]eviction.Threshold, error) {
	return eviction.ParseThresholds(c.EvictionHard, c.EvictionSoft, c.EvictionSoftGracePeriod, c.EvictionMinimumReclaim)
}

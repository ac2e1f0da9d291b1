package eviction

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// ParseThresholds reads the eviction settings of the KubeletConfiguration into thresholds, hard
// ones first, each kind sorted by signal (upstream helpers.go ParseThresholdConfig):
//
//   - hard (evictionHard) and soft (evictionSoft): signal → "quantity" or "percent%", parsed as
//     pkg/cm parses evictionHard for node allocatable ("0%" and "100%" mean no threshold);
//   - softGracePeriod (evictionSoftGracePeriod): signal → a duration; every soft threshold needs
//     one, and it must be positive (a zero would make it hard);
//   - minReclaim (evictionMinimumReclaim): signal → "quantity" or "percent%", applied to the hard
//     and soft thresholds of that signal.
//
// Each error names the setting and its flag.
func ParseThresholds(hard, soft, softGracePeriod, minReclaim map[string]string) ([]Threshold, error) {
	hardThresholds, err := cm.ParseEvictionHard(hard)
	if err != nil {
		return nil, fmt.Errorf("evictionHard (--eviction-hard): %w", err)
	}
	softThresholds, err := cm.ParseEvictionHard(soft)
	if err != nil {
		return nil, fmt.Errorf("evictionSoft (--eviction-soft): %w", err)
	}
	graces, err := parseGracePeriods(softGracePeriod)
	if err != nil {
		return nil, err
	}
	reclaims, err := parseMinReclaims(minReclaim)
	if err != nil {
		return nil, err
	}
	var out []Threshold
	for _, t := range hardThresholds {
		out = append(out, Threshold{Signal: Signal(t.Signal), Value: t.ThresholdValue})
	}
	for _, t := range softThresholds {
		grace, ok := graces[Signal(t.Signal)]
		if !ok {
			return nil, fmt.Errorf("evictionSoft (--eviction-soft) %s has no grace period: set evictionSoftGracePeriod "+
				"(--eviction-soft-grace-period) %s=<duration>, e.g. %s=1m30s", t.Signal, t.Signal, t.Signal)
		}
		out = append(out, Threshold{Signal: Signal(t.Signal), Value: t.ThresholdValue, GracePeriod: grace})
	}
	for i := range out {
		if r, ok := reclaims[out[i].Signal]; ok {
			out[i].MinReclaim = &r
		}
	}
	return out, nil
}

// parseGracePeriods reads evictionSoftGracePeriod (upstream parseGracePeriods; upstream also
// takes 0, which then makes the soft threshold a hard one; minikubelet asks for a positive one).
func parseGracePeriods(m map[string]string) (map[Signal]time.Duration, error) {
	out := map[Signal]time.Duration{}
	for _, s := range slices.Sorted(maps.Keys(m)) {
		if !cm.IsEvictionSignal(s) {
			return nil, fmt.Errorf("evictionSoftGracePeriod (--eviction-soft-grace-period): unsupported eviction signal %q", s)
		}
		d, err := time.ParseDuration(m[s])
		if err != nil {
			return nil, fmt.Errorf("evictionSoftGracePeriod (--eviction-soft-grace-period) %s=%q: not a duration; write it like 1m30s", s, m[s])
		}
		if d <= 0 {
			return nil, fmt.Errorf("evictionSoftGracePeriod (--eviction-soft-grace-period) %s=%q: must be positive", s, m[s])
		}
		out[Signal(s)] = d
	}
	return out, nil
}

// parseMinReclaims reads evictionMinimumReclaim (upstream parseMinimumReclaims): a
// non-negative quantity, or a positive percentage up to 100 %.
func parseMinReclaims(m map[string]string) (map[Signal]Value, error) {
	out := map[Signal]Value{}
	for _, s := range slices.Sorted(maps.Keys(m)) {
		v := m[s]
		field := fmt.Sprintf("evictionMinimumReclaim (--eviction-minimum-reclaim) %s=%q", s, v)
		if !cm.IsEvictionSignal(s) {
			return nil, fmt.Errorf("evictionMinimumReclaim (--eviction-minimum-reclaim): unsupported eviction signal %q", s)
		}
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			f, err := strconv.ParseFloat(pct, 32)
			if err != nil || math.IsNaN(f) || f <= 0 || f > 100 {
				return nil, fmt.Errorf("%s: a percentage must be more than 0%% and at most 100%%", field)
			}
			out[Signal(s)] = Value{Percentage: float32(f) / 100}
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			return nil, fmt.Errorf("%s: want a quantity of 0 or more like 500Mi, or a percentage like 5%%", field)
		}
		out[Signal(s)] = Value{Quantity: &q}
	}
	return out, nil
}

package options

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	cliflag "k8s.io/component-base/cli/flag"
	kubeletconfig "k8s.io/kubelet/config/v1beta1"
)

// Feature gates: --feature-gates Name=true,… on the command line, featureGates in the config file
// (upstream pkg/features/kube_features.go, set through component-base's featuregate). minikubelet
// knows only the gates it implements; any other name is refused, where upstream knows them all.

// EventedPLEG (KEP-3386): PLEG listens to the runtime's CRI container events and relists only
// as a safety net (pkg/pleg evented.go). Upstream v1.36: alpha since v1.26, off by default.
const EventedPLEG = "EventedPLEG"

// featureSpec is what minikubelet knows of a gate, as upstream's v1.36 spec says.
type featureSpec struct {
	def        bool   // the default
	preRelease string // ALPHA, BETA or GA, as upstream's help prints it
}

// knownFeatures are the gates minikubelet implements.
var knownFeatures = map[string]featureSpec{
	EventedPLEG: {def: false, preRelease: "ALPHA"},
}

// KnownFeatures lists the gates in upstream's help format: "EventedPLEG=true|false (ALPHA -
// default=false)".
func KnownFeatures() []string {
	var out []string
	for name, spec := range knownFeatures {
		out = append(out, fmt.Sprintf("%s=true|false (%s - default=%t)", name, spec.preRelease, spec.def))
	}
	sort.Strings(out)
	return out
}

// FeatureEnabled reports whether the gate name is on: its value in c.FeatureGates if set there,
// else its default. A gate minikubelet does not know is off (ValidateConfig refuses it anyway).
func FeatureEnabled(c *kubeletconfig.KubeletConfiguration, name string) bool {
	if on, ok := c.FeatureGates[name]; ok {
		return on
	}
	return knownFeatures[name].def
}

// validateFeatureGates returns one message per gate minikubelet does not know (upstream
// featuregate.SetFromMap: "unrecognized feature gate: X"), naming the ones it does.
func validateFeatureGates(gates map[string]bool) []string {
	var errs []string
	for name := range gates {
		if _, ok := knownFeatures[name]; !ok {
			errs = append(errs, fmt.Sprintf("featureGates (--feature-gates): unrecognized feature gate %q: minikubelet knows only %s; it implements no other upstream gate",
				name, strings.Join(KnownFeatures(), ", ")))
		}
	}
	sort.Strings(errs)
	return errs
}

// mergeFeatureGates puts the file's gates back under the command line's: a flag that sets one
// gate replaces the whole map (cliflag.MapStringBool), so, as upstream's
// kubeletConfigFlagPrecedence does, the gates the command line did not name keep the file's value.
func mergeFeatureGates(fromFlags, fromFile map[string]bool) map[string]bool {
	if len(fromFile) == 0 {
		return fromFlags
	}
	merged := maps.Clone(fromFile)
	maps.Copy(merged, fromFlags)
	return merged
}

// featureGatesValue is --feature-gates: upstream's MapStringBool, with advice when a value is not
// a boolean. Unknown gate names are refused by ValidateConfig, the file's as well.
type featureGatesValue struct{ *cliflag.MapStringBool }

func (v featureGatesValue) Set(value string) error {
	if err := v.MapStringBool.Set(value); err != nil {
		return fmt.Errorf("%w: write Name=true or Name=false; minikubelet knows only %s", err, strings.Join(KnownFeatures(), ", "))
	}
	return nil
}

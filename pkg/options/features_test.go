package options

import (
	"strings"
	"testing"
)

// Upstream feature gates, as the kubelet takes them: --feature-gates and the file's featureGates,
// the command line winning gate by gate (kubeletConfigFlagPrecedence merges the file's gates the
// flag did not name); EventedPLEG is alpha, off by default in v1.36.
func TestFeatureGates(t *testing.T) {
	tests := []struct {
		name string
		args []string
		file string // featureGates in the config file, if any
		want bool   // EventedPLEG
	}{
		{name: "default off", want: false},
		{name: "on by flag", args: []string{"--feature-gates", "EventedPLEG=true"}, want: true},
		{name: "on in the file", file: "featureGates:\n  EventedPLEG: true\n", want: true},
		{name: "the flag wins over the file", args: []string{"--feature-gates", "EventedPLEG=false"}, file: "featureGates: {EventedPLEG: true}\n", want: false},
		{name: "another flag keeps the file's gate", args: []string{"--max-pods", "20"}, file: "featureGates: {EventedPLEG: true}\n", want: true},
		{name: "the last flag wins", args: []string{"--feature-gates", "EventedPLEG=true", "--feature-gates", "EventedPLEG=false"}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseWithConfig(t, tc.file, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := FeatureEnabled(&o.Config, EventedPLEG); got != tc.want {
				t.Errorf("EventedPLEG = %v, want %v (gates %v)", got, tc.want, o.Config.FeatureGates)
			}
			for _, f := range o.IgnoredConfigFields {
				if f == "featureGates" {
					t.Error("featureGates reported as ignored")
				}
			}
		})
	}
}

// A gate minikubelet does not know is refused, naming the ones it knows (upstream: "unrecognized
// feature gate"); so is a value that is not a boolean.
func TestFeatureGatesRefused(t *testing.T) {
	known := "EventedPLEG=true|false (ALPHA - default=false)"
	tests := []struct {
		name string
		args []string
		file string
		want []string
	}{
		{name: "unknown gate by flag", args: []string{"--feature-gates", "InPlacePodVerticalScaling=true"},
			want: []string{`featureGates (--feature-gates): unrecognized feature gate "InPlacePodVerticalScaling"`, known}},
		{name: "unknown gate in the file", file: "featureGates: {EventedPleg: true}\n",
			want: []string{"--config ", `unrecognized feature gate "EventedPleg"`, known}},
		{name: "bad value by flag", args: []string{"--feature-gates", "EventedPLEG=maybe"},
			want: []string{"--feature-gates", "invalid value of EventedPLEG: maybe", "Name=true or Name=false", known}},
		{name: "bad value in the file", file: "featureGates: {EventedPLEG: maybe}\n",
			want: []string{"--config ", "featureGates"}},
		{name: "not a pair", args: []string{"--feature-gates", "EventedPLEG"}, want: []string{"malformed pair", known}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseWithConfig(t, tc.file, tc.args...)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans several lines", err)
			}
		})
	}
}

package options

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// evictionHard follows upstream's loadConfigFile: unset → the Linux defaults; set → exactly the
// file's (the defaults fill in only with mergeDefaultEvictionSettings); --eviction-hard replaces
// the file's map, as any map flag. Without a file minikubelet uses the defaults too.
func TestEvictionHardDefaults(t *testing.T) {
	defaults := map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
		"imagefs.available": "15%", "imagefs.inodesFree": "5%"}
	tests := []struct {
		name string
		body string // config file, "" for none
		args []string
		want map[string]string
	}{
		{"no file", "", nil, defaults},
		{"file without evictionHard", "maxPods: 20\n", nil, defaults},
		{"file with one threshold", "evictionHard: {memory.available: 1Gi}\n", nil, map[string]string{"memory.available": "1Gi"}},
		{"merged with the defaults", "evictionHard: {memory.available: 1Gi}\nmergeDefaultEvictionSettings: true\n", nil,
			map[string]string{"memory.available": "1Gi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%", "imagefs.inodesFree": "5%"}},
		{"flag without file", "", []string{"--eviction-hard", "memory.available<200Mi"}, map[string]string{"memory.available": "200Mi"}},
		{"flag over file", "evictionHard: {memory.available: 1Gi, nodefs.available: 5%}\n", []string{"--eviction-hard", "memory.available<200Mi"},
			map[string]string{"memory.available": "200Mi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseWithConfig(t, tc.body, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.Config.EvictionHard, tc.want) {
				t.Errorf("evictionHard = %v, want %v", o.Config.EvictionHard, tc.want)
			}
			if len(o.NodeReserved.HardEvictionThresholds) != len(tc.want) {
				t.Errorf("parsed thresholds %+v, want %d", o.NodeReserved.HardEvictionThresholds, len(tc.want))
			}
		})
	}
}

// kubeReserved and systemReserved from the file or their flags reach Options.NodeReserved.
func TestReservedParsed(t *testing.T) {
	o, err := parse(t, "--config", writeConfig(t, "kubeReserved: {cpu: 100m, memory: 256Mi}\nsystemReserved: {cpu: 200m}\n"),
		"--system-reserved", "memory=1Gi,pid=100")
	if err != nil {
		t.Fatal(err)
	}
	kube, sys := o.NodeReserved.KubeReserved, o.NodeReserved.SystemReserved
	if kube.Cpu().String() != "100m" || kube.Memory().String() != "256Mi" {
		t.Errorf("kubeReserved = %v", kube)
	}
	if _, ok := sys[corev1.ResourceCPU]; ok || sys.Memory().String() != "1Gi" || sys.Name("pid", resource.DecimalSI).String() != "100" {
		t.Errorf("systemReserved = %v, want the flag's memory=1Gi,pid=100 only", sys)
	}
}

// Bad reservations, thresholds and the systemd driver are refused with the field, its flag and
// what to write instead.
func TestResourceSettingsValidated(t *testing.T) {
	tests := []struct {
		name string
		args []string
		body string
		want []string
	}{
		{"bad kubeReserved quantity", nil, "kubeReserved: {cpu: lots}\n", []string{"kubeReserved (--kube-reserved)", `cpu="lots" is not a quantity`, "cpu=100m"}},
		{"negative systemReserved", []string{"--system-reserved", "memory=-1Gi"}, "", []string{"systemReserved (--system-reserved)", "negative"}},
		{"unreservable resource", []string{"--kube-reserved", "gpu=1"}, "", []string{`cannot reserve "gpu"`}},
		{"unknown signal", nil, "evictionHard: {memory.free: 1Gi}\n", []string{"evictionHard (--eviction-hard)", `unsupported eviction signal "memory.free"`}},
		{"percentage above 100", []string{"--eviction-hard", "nodefs.available<150%"}, "", []string{"evictionHard (--eviction-hard)", "within 0% and 100%"}},
		{"zero quantity", []string{"--eviction-hard", "memory.available<0"}, "", []string{"must be positive"}},
		{"bad quantity", []string{"--eviction-hard", "memory.available<much"}, "", []string{"memory.available<much: not a quantity"}},
		{"soft without grace period", []string{"--eviction-soft", "memory.available<1Gi"}, "", []string{"evictionSoft (--eviction-soft) memory.available has no grace period",
			"evictionSoftGracePeriod (--eviction-soft-grace-period) memory.available=<duration>"}},
		{"bad grace period", nil, "evictionSoft: {memory.available: 1Gi}\nevictionSoftGracePeriod: {memory.available: soon}\n", []string{"evictionSoftGracePeriod (--eviction-soft-grace-period)", "not a duration"}},
		{"bad minimum reclaim", []string{"--eviction-minimum-reclaim", "nodefs.available=0%"}, "", []string{"evictionMinimumReclaim (--eviction-minimum-reclaim)", "more than 0%"}},
		{"negative transition period", []string{"--eviction-pressure-transition-period", "-1s"}, "", []string{"evictionPressureTransitionPeriod (--eviction-pressure-transition-period) must not be negative"}},
		{"systemd flag", []string{"--cgroup-driver", "systemd"}, "", []string{`cgroupDriver (--cgroup-driver) "systemd" is not supported`, "cgroupfs"}},
		{"systemd in file", nil, "cgroupDriver: systemd\n", []string{`cgroupDriver (--cgroup-driver) "systemd" is not supported`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseWithConfig(t, tc.body, tc.args...)
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error = %v, want it to mention %q", err, want)
				}
			}
		})
	}
	if _, err := parse(t, "--cgroup-driver", "cgroupfs"); err != nil {
		t.Errorf("--cgroup-driver cgroupfs refused: %v", err)
	}
}

// The eviction settings are implemented: from the file or their flags (the command line wins)
// into Options.EvictionThresholds and the config, with upstream's defaults (transition period
// 5 min, local storage isolation on); none is reported as ignored.
func TestEvictionSettings(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.EvictionPressureTransitionPeriod.Duration != 5*time.Minute || !*o.Config.LocalStorageCapacityIsolation || len(o.EvictionThresholds) != 5 {
		t.Errorf("defaults: transition %s, local storage isolation %v, %d thresholds; want 5m, true and the 5 default hard ones",
			o.Config.EvictionPressureTransitionPeriod.Duration, *o.Config.LocalStorageCapacityIsolation, len(o.EvictionThresholds))
	}
	body := "evictionHard: {memory.available: 1Gi}\nevictionSoft: {memory.available: 2Gi, nodefs.available: 20%}\n" +
		"evictionSoftGracePeriod: {memory.available: 1m, nodefs.available: 2m}\nevictionMaxPodGracePeriod: 60\n" +
		"evictionPressureTransitionPeriod: 30s\nevictionMinimumReclaim: {memory.available: 100Mi}\nlocalStorageCapacityIsolation: false\n"
	o, err = parse(t, "--config", writeConfig(t, body), "--eviction-max-pod-grace-period", "20", "--eviction-pressure-transition-period", "10s")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.IgnoredConfigFields) != 0 {
		t.Errorf("ignored fields %v, want none", o.IgnoredConfigFields)
	}
	c := o.Config
	if c.EvictionMaxPodGracePeriod != 20 || c.EvictionPressureTransitionPeriod.Duration != 10*time.Second || *c.LocalStorageCapacityIsolation {
		t.Errorf("max grace %d, transition %s, local storage isolation %v; want the flags' 20 and 10s, the file's false",
			c.EvictionMaxPodGracePeriod, c.EvictionPressureTransitionPeriod.Duration, *c.LocalStorageCapacityIsolation)
	}
	var got []string
	for _, th := range o.EvictionThresholds {
		got = append(got, fmt.Sprintf("%s/%s/%v", th.Signal, th.GracePeriod, th.MinReclaim != nil))
	}
	want := []string{"memory.available/0s/true", "memory.available/1m0s/true", "nodefs.available/2m0s/false"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("thresholds %v, want %v", got, want)
	}
}

// volumeStatsAggPeriod is implemented: upstream's 1 min default, from the file or
// --volume-stats-agg-period (the command line wins), never reported as ignored.
func TestVolumeStatsAggPeriod(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Config.VolumeStatsAggPeriod.Duration; got != time.Minute {
		t.Errorf("default %s, want 1m", got)
	}
	o, err = parse(t, "--config", writeConfig(t, "volumeStatsAggPeriod: 30s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Config.VolumeStatsAggPeriod.Duration; got != 30*time.Second || len(o.IgnoredConfigFields) != 0 {
		t.Errorf("from the file: %s, ignored %v; want 30s, none ignored", got, o.IgnoredConfigFields)
	}
	o, err = parse(t, "--config", writeConfig(t, "volumeStatsAggPeriod: 30s\n"), "--volume-stats-agg-period", "2s")
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Config.VolumeStatsAggPeriod.Duration; got != 2*time.Second {
		t.Errorf("with the flag: %s, want 2s", got)
	}
}

package options

import (
	"reflect"
	"strings"
	"testing"

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
			args := tc.args
			if tc.body != "" {
				args = append(args, "--config", writeConfig(t, tc.body))
			}
			o, err := parse(t, args...)
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
		{"systemd flag", []string{"--cgroup-driver", "systemd"}, "", []string{`cgroupDriver (--cgroup-driver) "systemd" is not supported`, "cgroupfs"}},
		{"systemd in file", nil, "cgroupDriver: systemd\n", []string{`cgroupDriver (--cgroup-driver) "systemd" is not supported`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.body != "" {
				args = append(args, "--config", writeConfig(t, tc.body))
			}
			_, err := parse(t, args...)
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

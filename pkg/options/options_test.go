package options

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o := AddFlags(fs)
	if err := fs.Parse(append([]string{"--root-dir", t.TempDir(), "--hostname-override", "node-1"}, args...)); err != nil {
		return nil, err
	}
	return o, o.Complete(fs)
}

// parseWithConfig is parse with args and, unless body is "", a config file of that body.
func parseWithConfig(t *testing.T, body string, args ...string) (*Options, error) {
	t.Helper()
	if body != "" {
		args = slices.Concat(args, []string{"--config", writeConfig(t, body)})
	}
	return parse(t, args...)
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The course's real kubelet config (kubeadm-style: authentication, evictionHard, cgroupDriver…)
// is refused for its cgroupDriver: systemd, with advice; with cgroupfs it loads, what we do not
// implement is reported, what we do is applied.
func TestCourseKubeletConfigLoads(t *testing.T) {
	_, err := parse(t, "--config", "testdata/course-kubelet-conf.yml")
	if err == nil || !strings.Contains(err.Error(), `cgroupDriver (--cgroup-driver) "systemd" is not supported`) || !strings.Contains(err.Error(), "set cgroupDriver: cgroupfs") {
		t.Fatalf("the course config with cgroupDriver: systemd: error %v, want it refused with advice", err)
	}
	data, err := os.ReadFile("testdata/course-kubelet-conf.yml")
	if err != nil {
		t.Fatal(err)
	}
	cgroupfs := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cgroupfs, []byte(strings.Replace(string(data), "cgroupDriver: systemd", "cgroupDriver: cgroupfs", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parse(t, "--config", cgroupfs)
	if err != nil {
		t.Fatalf("the course config does not load: %v", err)
	}
	if o.Config.MaxPods != 110 || o.Config.Port != 10250 || o.Config.NodeStatusUpdateFrequency.Duration != 10*time.Second || !o.Config.RotateCertificates {
		t.Errorf("implemented fields not applied: %+v", o.Config)
	}
	ignored := strings.Join(o.IgnoredConfigFields, ",")
	for _, f := range []string{"cgroupsPerQOS", "cpuCFSQuota", "readOnlyPort"} {
		if !strings.Contains(ignored, f) {
			t.Errorf("%s not reported as ignored: %s", f, ignored)
		}
	}
	for _, f := range []string{"maxPods", "evictionHard", "cgroupDriver", "clusterDomain"} {
		if strings.Contains(ignored, f) {
			t.Errorf("%s is implemented but reported as ignored", f)
		}
	}
	// The file's four thresholds, not merged with the defaults (imagefs.inodesFree).
	if len(o.NodeReserved.HardEvictionThresholds) != 4 {
		t.Errorf("evictionHard thresholds %+v, want the file's 4", o.NodeReserved.HardEvictionThresholds)
	}
}

// Upstream: a flag given on the command line overrides the same setting in the --config file.
func TestFlagsOverrideConfigFile(t *testing.T) {
	cfg := writeConfig(t, "maxPods: 50\nport: 10300\nnodeStatusUpdateFrequency: 20s\n")
	o, err := parse(t, "--config", cfg, "--max-pods", "7")
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.MaxPods != 7 {
		t.Errorf("maxPods = %d, want the flag's 7", o.Config.MaxPods)
	}
	if o.Config.Port != 10300 || o.Config.NodeStatusUpdateFrequency.Duration != 20*time.Second {
		t.Errorf("file values lost: port %d frequency %s", o.Config.Port, o.Config.NodeStatusUpdateFrequency.Duration)
	}
	if o.Config.NodeStatusReportFrequency.Duration != 5*time.Minute || o.Config.NodeLeaseDurationSeconds != 40 {
		t.Errorf("defaults not applied to omitted fields: %+v", o.Config)
	}
}

func TestDefaultsAndDerivedPaths(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.CertDir != filepath.Join(o.RootDir, "pki") || o.Kubeconfig != filepath.Join(o.RootDir, "kubeconfig") {
		t.Errorf("cert dir %s, kubeconfig %s: want them under the root dir", o.CertDir, o.Kubeconfig)
	}
	if o.Config.PodLogsDir != filepath.Join(o.RootDir, "pod-logs") {
		t.Errorf("pod logs dir %s, want <root-dir>/pod-logs", o.Config.PodLogsDir)
	}
	if o.NodeName != "node-1" {
		t.Errorf("node name = %s", o.NodeName)
	}
	// Upstream's v1beta1 defaults: Events get their own 50 QPS and burst of 100.
	if c := o.Config; c.EventRecordQPS == nil || *c.EventRecordQPS != 50 || c.EventBurst != 100 {
		t.Errorf("eventRecordQPS %v, eventBurst %d: want 50 and 100", c.EventRecordQPS, c.EventBurst)
	}
}

func TestValidationNamesTheFlagOrField(t *testing.T) {
	tests := []struct {
		name string
		args []string
		body string // config file body, if any
		want string
	}{
		{"negative maxPods in file", nil, "maxPods: -1\n", "maxPods (--max-pods)"},
		{"unknown field in file", nil, "maxPod: 3\n", `unknown field "maxPod"`},
		{"report shorter than update", nil, "nodeStatusReportFrequency: 1s\n", "nodeStatusReportFrequency"},
		{"tiny lease", nil, "nodeLeaseDurationSeconds: 2\n", "nodeLeaseDurationSeconds"},
		{"negative eventRecordQPS", nil, "eventRecordQPS: -1\n", "eventRecordQPS must not be negative"},
		{"negative eventBurst", nil, "eventBurst: -5\n", "eventBurst must not be negative"},
		{"bad port flag", []string{"--port", "70000"}, "", "port (--port)"},
		{"bad node ip", []string{"--node-ip", "10.0.0"}, "", "--node-ip"},
		{"bad capacity", []string{"--node-capacity", "cpu=lots"}, "", "--node-capacity cpu"},
		{"short cert duration", []string{"--client-cert-duration", "1m"}, "", "--client-cert-duration"},
		{"taint without effect", []string{"--register-with-taints", "a=b"}, "", "missing effect"},
		{"taint with bad effect", []string{"--register-with-taints", "a=b:Sometimes"}, "", `effect "Sometimes"`},
		{"restricted label", []string{"--node-labels", "node-role.kubernetes.io/master="}, "", "NodeRestriction"},
		{"bad node name", []string{"--hostname-override", "Not_A_Name"}, "", "--hostname-override"},
		{"debug address on every interface", []string{"--debug-address", "0.0.0.0:10256"}, "", "--debug-address \"0.0.0.0:10256\" is not a loopback IP address"},
		{"debug address by name", []string{"--debug-address", "localhost:10256"}, "", "use e.g. 127.0.0.1:10256"},
		{"debug address without port", []string{"--debug-address", "127.0.0.1"}, "", "--debug-address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseWithConfig(t, tc.body, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestParseTaintsAndLabels(t *testing.T) {
	o, err := parse(t, "--register-with-taints", "dedicated=gpu:NoSchedule,spot:PreferNoSchedule",
		"--node-labels", "node.kubernetes.io/pool=a,example.com/team=b,kubernetes.io/arch=amd64")
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}, {Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}
	if len(o.Taints) != 2 || o.Taints[0] != want[0] || o.Taints[1] != want[1] {
		t.Errorf("taints = %+v, want %+v", o.Taints, want)
	}
	if o.NodeLabels["example.com/team"] != "b" {
		t.Errorf("labels = %v", o.NodeLabels)
	}
}

// --debug-address is off by default and takes a loopback IP:port (the journal without auth).
func TestDebugAddress(t *testing.T) {
	o, err := parse(t)
	if err != nil || o.DebugAddress != "" {
		t.Fatalf("default --debug-address = %q (%v), want off", o.DebugAddress, err)
	}
	for _, addr := range []string{"127.0.0.1:10256", "[::1]:10256"} {
		if o, err := parse(t, "--debug-address", addr); err != nil || o.DebugAddress != addr {
			t.Errorf("--debug-address %s: %q, %v", addr, o.DebugAddress, err)
		}
	}
}

// --nodes N: node i is <prefix>i with everything it writes under <root-dir>/<prefix>i/; a path
// that all agents would share is refused with the reason, as are settings that serve one node.
func TestNodesDeriveOneDirectoryPerNode(t *testing.T) {
	o, err := parse(t, "--nodes", "3", "--node-name-prefix", "fake-", "--bootstrap-kubeconfig", "/b.conf")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.NodeNames(), ","); got != "fake-1,fake-2,fake-3" {
		t.Errorf("NodeNames = %s", got)
	}
	n := o.ForNode(2)
	want := filepath.Join(o.RootDir, "fake-2")
	if n.NodeName != "fake-2" || n.Nodes != 1 || n.RootDir != want || n.CertDir != filepath.Join(want, "pki") ||
		n.Kubeconfig != filepath.Join(want, "kubeconfig") || n.Config.PodLogsDir != filepath.Join(want, "pod-logs") {
		t.Errorf("ForNode = name %s nodes %d root %s certs %s kubeconfig %s logs %s", n.NodeName, n.Nodes, n.RootDir, n.CertDir, n.Kubeconfig, n.Config.PodLogsDir)
	}
	// Each node's fake runtime hands out pod IPs from a /24 of its own.
	for i, want := range map[int]string{1: "127.88.1.0/24", 2: "127.88.2.0/24", 255: "127.88.255.0/24", 256: "127.89.0.0/24", MaxNodes - 1: "127.255.255.0/24"} {
		if got := o.ForNode(i).Config.PodCIDR; got != want {
			t.Errorf("node %d: podCIDR %s, want %s", i, got, want)
		}
		if err := ValidateConfig(&o.ForNode(i).Config); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
	// One /healthz per process: agent 1's, on the configured port; the others' is off.
	if p1, p2 := *o.ForNode(1).Config.HealthzPort, *o.ForNode(2).Config.HealthzPort; p1 != 10248 || p2 != 0 || *o.Config.HealthzPort != 10248 {
		t.Errorf("healthzPort: node 1 %d, node 2 %d, shared %d; want 10248, 0, 10248", p1, p2, *o.Config.HealthzPort)
	}
	if o.NodeName != "node-1" || o.RootDir == want {
		t.Errorf("ForNode changed the shared options: %s %s", o.NodeName, o.RootDir)
	}

	// Without a prefix, the nodes are named after the node name.
	o, err = parse(t, "--nodes", "2", "--bootstrap-kubeconfig", "/b.conf")
	if err != nil || strings.Join(o.NodeNames(), ",") != "node-1-1,node-1-2" {
		t.Errorf("default prefix: %v, %v", o.NodeNames(), err)
	}
	if o, err := parse(t); err != nil || strings.Join(o.NodeNames(), ",") != "node-1" {
		t.Errorf("one node: %v", err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "0"}, "--nodes 0"},
		{[]string{"--nodes", "43008", "--bootstrap-kubeconfig", "/b"}, "up to 43007 node agents"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--pod-manifest-path", "/m"}, "each would run every static pod"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--pod-cidr", "10.1.0.0/16"}, "podCIDR 10.1.0.0/16 cannot be shared"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--debug-keepalive"}, "without --nodes"},
		{[]string{"--nodes", "2"}, "--bootstrap-kubeconfig"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--kubeconfig", "/k"}, "--kubeconfig cannot be shared"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--cert-dir", "/c"}, "--cert-dir cannot be shared"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--pod-logs-dir", "/l"}, "--pod-logs-dir"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--container-runtime-endpoint", "unix:///c.sock"}, "drop --container-runtime-endpoint"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--debug-address", "127.0.0.1:10256"}, "without --nodes"},
		{[]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b", "--node-name-prefix", "Fake_"}, "--node-name-prefix \"Fake_\""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if _, err := parse(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// podCIDR (--pod-cidr), as the kubelet's standalone-mode field: the fake runtime's pod range.
func TestPodCIDR(t *testing.T) {
	for _, tc := range []struct {
		cidr    string
		wantErr bool
	}{
		{"10.1.0.0/16", false},
		{"192.168.7.0/30", false},
		{"10.1.0.0/31", true},
		{"fd00::/64", true},
		{"10.1.0.0", true},
	} {
		t.Run(tc.cidr, func(t *testing.T) {
			o, err := parse(t, "--pod-cidr", tc.cidr)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--pod-cidr") {
					t.Errorf("err = %v, want one naming --pod-cidr", err)
				}
				return
			}
			if err != nil || o.Config.PodCIDR != tc.cidr {
				t.Errorf("podCIDR %q, err %v", o.Config.PodCIDR, err)
			}
		})
	}
}

// --nodes follows the runtime's container events unless told otherwise: an idle node would
// relist every second; the gate set either way on the command line wins, and the shared
// options keep their own map.
func TestNodesSwitchEventedPLEGOnUnlessSet(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--feature-gates", "EventedPLEG=false"}, false},
		{[]string{"--feature-gates", "EventedPLEG=true"}, true},
	} {
		o, err := parse(t, append([]string{"--nodes", "2", "--bootstrap-kubeconfig", "/b.conf"}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if got := FeatureEnabled(&o.ForNode(1).Config, EventedPLEG); got != tc.want {
			t.Errorf("%v: EventedPLEG on node 1 = %v, want %v", tc.args, got, tc.want)
		}
		if _, set := o.Config.FeatureGates[EventedPLEG]; tc.args == nil && set {
			t.Errorf("ForNode set the gate in the shared options")
		}
	}
}

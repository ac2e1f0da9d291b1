package options

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// kubeadm init's /var/lib/kubelet/config.yaml loads as it is: every field kubeadm sets that
// minikubelet implements is applied (healthz on 127.0.0.1:10248, clusterDNS, clusterDomain, the
// x509 client CA, webhook authn/authz, the CRI endpoint), the 0s durations kubeadm marshals get
// upstream's defaults, and the fields minikubelet does not implement are reported, by name, to be
// logged at start — never dropped silently.
func TestKubeadmKubeletConfigLoads(t *testing.T) {
	o, err := parse(t, "--config", "testdata/kubeadm-config.yaml",
		"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--hostname-override=cp-1", "--node-ip=10.0.0.2")
	if err != nil {
		t.Fatalf("kubeadm's config.yaml and drop-in flags do not load: %v", err)
	}
	c := o.Config
	checks := []struct {
		field     string
		got, want any
	}{
		{"staticPodPath", c.StaticPodPath, "/etc/kubernetes/manifests"},
		{"healthzBindAddress", c.HealthzBindAddress, "127.0.0.1"},
		{"healthzPort", *c.HealthzPort, int32(10248)},
		{"clusterDNS", strings.Join(c.ClusterDNS, ","), "10.96.0.10"},
		{"clusterDomain", c.ClusterDomain, "cluster.local"},
		{"resolvConf (defaulted)", *c.ResolverConfig, "/etc/resolv.conf"},
		{"authentication.x509.clientCAFile", c.Authentication.X509.ClientCAFile, "/etc/kubernetes/pki/ca.crt"},
		{"authentication.webhook.cacheTTL (0s → 2m)", c.Authentication.Webhook.CacheTTL.Duration, 2 * time.Minute},
		{"nodeStatusUpdateFrequency (0s → 10s)", c.NodeStatusUpdateFrequency.Duration, 10 * time.Second},
		{"rotateCertificates", c.RotateCertificates, true},
		{"--container-runtime-endpoint (from containerRuntimeEndpoint)", o.ContainerRuntimeEndpoint, "unix:///run/containerd/containerd.sock"},
		{"--kubeconfig", o.Kubeconfig, "/etc/kubernetes/kubelet.conf"},
		{"node name", o.NodeName, "cp-1"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.field, ch.got, ch.want)
		}
	}
	wantIgnored := []string{"cpuManagerReconcilePeriod", "crashLoopBackOff", "httpCheckFrequency", "imageMaximumGCAge",
		"imageMinimumGCAge", "logging", "memorySwap", "shutdownGracePeriod", "shutdownGracePeriodCriticalPods",
		"streamingConnectionIdleTimeout"}
	if !slices.Equal(o.IgnoredConfigFields, wantIgnored) {
		t.Errorf("ignored fields %v, want exactly %v", o.IgnoredConfigFields, wantIgnored)
	}
}

// healthzPort 0 turns /healthz off, as upstream; out-of-range ports, non-IP bind addresses and
// clusterDNS entries are refused naming the field and its flag.
func TestHealthzAndDNSValidation(t *testing.T) {
	o, err := parse(t, "--config", writeConfig(t, "healthzPort: 0\nresolvConf: \"\"\n"))
	if err != nil || *o.Config.HealthzPort != 0 || *o.Config.ResolverConfig != "" {
		t.Fatalf("healthzPort: 0 and resolvConf: \"\" must load as given: %v", err)
	}
	o, err = parse(t, "--config", writeConfig(t, "clusterDNS: [10.96.0.10]\n"), "--cluster-dns=10.0.0.10,fd00::a", "--healthz-port=0")
	if err != nil || strings.Join(o.Config.ClusterDNS, ",") != "10.0.0.10,fd00::a" || *o.Config.HealthzPort != 0 {
		t.Fatalf("flags must override the file: clusterDNS %v healthzPort %v err %v", o.Config.ClusterDNS, *o.Config.HealthzPort, err)
	}
	for _, tc := range []struct{ body, want string }{
		{"healthzPort: 70000\n", "healthzPort (--healthz-port) 70000 must be between 1 and 65535, inclusive"},
		{"healthzBindAddress: localhost\n", `healthzBindAddress (--healthz-bind-address) "localhost" is not an IP address`},
		{"clusterDNS: [kube-dns]\n", `clusterDNS (--cluster-dns) "kube-dns" is not an IP address`},
	} {
		if _, err := parse(t, "--config", writeConfig(t, tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.want)
		}
	}
}

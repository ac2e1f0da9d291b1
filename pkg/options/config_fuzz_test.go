package options

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzLoadConfigFile writes arbitrary bytes as the --config file and loads it: strict decoding,
// defaulting and validation. Whatever the file holds, minikubelet must not crash, and a bad file
// gets what every bad input gets (docs/reference.md "Flags and config"): one line that starts with
// "--config" and says what is wrong. A file that loads must pass validation. It writes only in
// t.TempDir().
//
//	go test -run '^$' -fuzz FuzzLoadConfigFile -fuzztime 60s ./pkg/options
func FuzzLoadConfigFile(f *testing.F) {
	const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	if course, err := os.ReadFile(filepath.Join("testdata", "course-kubelet-conf.yml")); err == nil {
		f.Add(course) // the course's kubeadm-style config: authentication, evictionHard, cgroupDriver…
	}
	for _, seed := range []string{
		header,
		header + "maxPods: 30\nport: 10250\naddress: 127.0.0.1\nnodeStatusUpdateFrequency: 2s\nnodeLeaseDurationSeconds: 40\n",
		header + "authentication:\n  anonymous: {enabled: false}\n  webhook: {enabled: true, cacheTTL: 2m}\nauthorization: {mode: Webhook}\n",
		header + "kubeAPIQPS: -1\nkubeAPIBurst: 10\nconfigMapAndSecretChangeDetectionStrategy: Cache\n",
		header + "maxPods: -3\n",
		header + "nodeStatusUpdateFrequncy: 10s\n",
		header + "syncFrequency: 1e400h\n",
		header + "runtimeRequestTimeout: \"-1s\"\nport: 70000\n",
		header + "evictionHard: {memory.available: 100Mi}\ncgroupDriver: systemd\n",
		header + "staticPodPath: /etc/kubernetes/manifests\nfileCheckFrequency: 20s\naddress: \"0.0.0.0\"\n",
		header + "authentication: {webhook: {cacheTTL: 2m}}\nauthorization: {mode: Webhook, webhook: {cacheAuthorizedTTL: 5m, cacheUnauthorizedTTL: 30s}}\n",
		header + "featureGates:\n  EventedPLEG: true\n",
		header + "featureGates: {EventedPLEG: maybe, AllAlpha: true}\n",
		`{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":12}`,
		"apiVersion: v1\nkind: ConfigMap\n",
		"apiVersion: v1\nclusters: [ {{{ not yaml\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, ignored, err := LoadConfigFile(path)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "--config ") || len(msg) <= len("--config "+path+": ") {
				t.Errorf("error %q: want a message that starts with --config and says what is wrong", msg)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error %q spans several lines; minikubelet promises one", msg)
			}
			if !utf8.ValidString(msg) {
				t.Errorf("error %q is not valid UTF-8", msg)
			}
			return
		}
		if verr := ValidateConfig(&cfg); verr != nil {
			t.Errorf("loaded a config that does not validate: %v", verr)
		}
		// What loads must be accepted by the components it configures, or the mistake surfaces
		// late — after TLS bootstrap and node registration — in a component's words, not as a
		// --config error: server.New parses address with net.ParseIP and refuses negative cache
		// TTLs; podsource.New refuses a non-positive fileCheckFrequency.
		if net.ParseIP(cfg.Address) == nil {
			t.Errorf("loaded address %q, which the kubelet API server cannot listen on", cfg.Address)
		}
		if cfg.FileCheckFrequency.Duration <= 0 {
			t.Errorf("loaded fileCheckFrequency %s, which the static pod source refuses", cfg.FileCheckFrequency.Duration)
		}
		for name, ttl := range map[string]time.Duration{
			"authentication.webhook.cacheTTL":            cfg.Authentication.Webhook.CacheTTL.Duration,
			"authorization.webhook.cacheAuthorizedTTL":   cfg.Authorization.Webhook.CacheAuthorizedTTL.Duration,
			"authorization.webhook.cacheUnauthorizedTTL": cfg.Authorization.Webhook.CacheUnauthorizedTTL.Duration,
		} {
			if ttl < 0 {
				t.Errorf("loaded %s %s, which the kubelet API server refuses", name, ttl)
			}
		}
		for _, field := range ignored {
			if implementedFields[field] {
				t.Errorf("field %q is implemented but reported as ignored", field)
			}
		}
	})
}

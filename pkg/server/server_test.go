package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
)

// Pins that New refuses configurations the kubelet cannot serve safely, with advice.
func TestNewValidates(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"no node name", func(c *Config) { c.NodeName = "" }, "NodeName"},
		{"no host", func(c *Config) { c.Host = nil }, "Host"},
		{"address is not an IP", func(c *Config) { c.Address = "localhost" }, "not an IP"},
		{"port out of range", func(c *Config) { c.Port = 70000 }, "out of range"},
		{"cert without key", func(c *Config) { c.TLSCertFile = "/x/kubelet.crt" }, "TLSKeyFile"},
		{"no cert dir", func(c *Config) { c.CertDir = "" }, "CertDir"},
		{"both CA file and data", func(c *Config) { c.ClientCAFile, c.ClientCAData = "/x/ca.crt", []byte("x") }, "not both"},
		{"webhook without client", func(c *Config) { c.WebhookAuthz = true }, "Client"},
		{"no way to authenticate", func(c *Config) { c.Anonymous = false }, "configure a client CA"},
		{"bad client CA data", func(c *Config) { c.ClientCAData = []byte("not a certificate") }, "client CA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := openConfig(t, &fakeHost{}, &fakeStreaming{})
			tc.modify(&cfg)
			_, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}

	s, err := New(openConfig(t, &fakeHost{}, &fakeStreaming{}))
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.Port != DefaultPort || s.cfg.Address != "0.0.0.0" || s.cfg.AuthnCacheTTL.Minutes() != 2 ||
		s.cfg.AuthzAuthorizedTTL.Minutes() != 5 || s.cfg.AuthzUnauthorizedTTL.Seconds() != 30 {
		t.Errorf("defaults = %+v, want port 10250 on 0.0.0.0 and TTLs 2m/5m/30s", s.cfg)
	}
	if s.tlsConfig.MinVersion != 0x0303 || s.tlsConfig.ClientAuth.String() != "RequestClientCert" {
		t.Errorf("TLS config: min version %x, client auth %v; want TLS 1.2 and RequestClientCert", s.tlsConfig.MinVersion, s.tlsConfig.ClientAuth)
	}
}

// Pins /healthz, /pods, /configz, /metrics (from the registry passed in) and /debug/pprof.
func TestInfoEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	syncs := prometheus.NewCounter(prometheus.CounterOpts{Name: "minikubelet_test_syncs_total", Help: "Test counter."})
	reg.MustRegister(syncs)
	syncs.Add(3)

	cfg := openConfig(t, &fakeHost{pods: []*corev1.Pod{testPod()}}, &fakeStreaming{})
	cfg.Metrics = reg
	cfg.Configz = func() any { return map[string]any{"maxPods": 110} }
	cfg.Profiling = true
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}

	if rec := get("/healthz"); rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Errorf("/healthz: got %d %q, want 200 ok", rec.Code, rec.Body.String())
	}

	rec := get("/pods")
	var list corev1.PodList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("/pods: got %d, decode error %v", rec.Code, err)
	}
	if rec.Header().Get("Content-Type") != "application/json" || len(list.Items) != 1 || list.Items[0].Spec.NodeName != testNode {
		t.Errorf("/pods = %+v, want a JSON PodList with the node's pod", list)
	}

	rec = get("/configz")
	var configz map[string]map[string]int
	if err := json.Unmarshal(rec.Body.Bytes(), &configz); err != nil || configz["kubeletconfig"]["maxPods"] != 110 {
		t.Errorf("/configz = %q (%v), want {\"kubeletconfig\":{\"maxPods\":110}}", rec.Body.String(), err)
	}

	rec = get("/metrics")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "minikubelet_test_syncs_total 3") {
		t.Errorf("/metrics: got %d, body lacks the registry's counter:\n%s", rec.Code, rec.Body.String())
	}

	rec = get("/debug/pprof/heap?debug=1")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "heap profile") {
		t.Errorf("/debug/pprof/heap: got %d %.200q, want the heap profile", rec.Code, rec.Body.String())
	}

	// Without Metrics, Configz and Profiling those routes do not exist.
	s, err = New(openConfig(t, &fakeHost{}, &fakeStreaming{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/metrics", "/configz", "/debug/pprof/heap"} {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s without a source: got %d, want 404", path, rec.Code)
		}
	}
}

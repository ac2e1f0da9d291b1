package version

import "testing"

// The kubelet reports the Kubernetes release it was built from; staging modules v0.X.Y belong to v1.X.Y.
func TestKubernetesFromModule(t *testing.T) {
	for in, want := range map[string]string{"v0.36.3": "v1.36.3", "v0.37.0-rc.1": "v1.37.0-rc.1", "unknown": "unknown"} {
		if got := KubernetesFromModule(in); got != want {
			t.Errorf("KubernetesFromModule(%q) = %q, want %q", in, got, want)
		}
	}
}

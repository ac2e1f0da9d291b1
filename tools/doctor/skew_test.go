package doctor

import (
	"strings"
	"testing"
)

// The version skew policy (https://kubernetes.io/releases/version-skew-policy/#kubelet): the
// kubelet must not be newer than kube-apiserver, and may be up to three minor versions older.
// Only minor versions count: patch releases of one minor may mix.
func TestVersionSkew(t *testing.T) {
	tests := []struct {
		name, kubelet, apiserver string
		want                     Status
		wantText                 string
	}{
		{"same", "v1.36.3", "v1.36.3", OK, "same minor version"},
		{"newer patch is fine", "v1.36.5", "v1.36.0", OK, "same minor version"},
		{"three older", "v1.33.9", "v1.36.3", OK, "3 minor version(s) older"},
		{"four older", "v1.32.0", "v1.36.3", Warn, "4 minor versions older"},
		{"kubelet newer", "v1.37.0", "v1.36.3", Fail, "newer than kube-apiserver"},
		{"distribution suffix", "v1.36.3", "v1.36.3+k3s1", OK, "same minor version"},
		{"unknown build", "unknown", "v1.36.3", Warn, "cannot compare"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := versionSkew(tc.kubelet, tc.apiserver)
			if got.Status != tc.want || !strings.Contains(got.Message, tc.wantText) {
				t.Errorf("versionSkew(%s, %s) = %v %q; want %v containing %q", tc.kubelet, tc.apiserver, got.Status, got.Message, tc.want, tc.wantText)
			}
			if got.Status != OK && got.Fix == "" {
				t.Errorf("a %v has no fix", got.Status)
			}
		})
	}
}

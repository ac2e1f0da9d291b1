package volumemanager

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A local PV's path with a ".." element is refused with upstream's message even when it exists
// (upstream localVolumeMounter.SetUpAt: validation.ValidatePathNoBacksteps); a clean path is the
// volume's host path.
func TestLocalPluginRefusesBacksteps(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	spec := func(path string) volumeSpec {
		return volumeSpec{volume: &corev1.Volume{Name: "data"}, pv: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-local"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}}}}}
	}
	escaping := filepath.Join(dir, "sub") + "/../sub"
	_, err := localPlugin{}.setUp(t.Context(), &corev1.Pod{}, spec(escaping))
	if want := "invalid path: " + escaping + " must not contain '..'"; err == nil || err.Error() != want {
		t.Fatalf("setUp(%s) error = %v, want %s", escaping, err, want)
	}
	clean := filepath.Join(dir, "sub")
	if got, err := (localPlugin{}).setUp(t.Context(), &corev1.Pod{}, spec(clean)); err != nil || got != clean {
		t.Fatalf("setUp(%s) = %q, %v; want the path", clean, got, err)
	}
}

// How each volume's usage is measured follows upstream's plugins' MetricsProvider: du for the
// kubelet's own directories, statfs for a local PV, nothing for hostPath (MetricsNil) and CSI.
func TestVolumeSpecMetrics(t *testing.T) {
	pv := func(src corev1.PersistentVolumeSource) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src}}
	}
	claim := &corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}
	for _, tc := range []struct {
		name string
		spec volumeSpec
		want MetricsSource
	}{
		{"emptyDir", volumeSpec{volume: &corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}, MetricsDu},
		{"configMap", volumeSpec{volume: &corev1.Volume{VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}}, MetricsDu},
		{"hostPath", volumeSpec{volume: &corev1.Volume{VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}, MetricsNone},
		{"csi inline", volumeSpec{volume: &corev1.Volume{VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}}}, MetricsNone},
		{"local PV", volumeSpec{volume: claim, pv: pv(corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/"}})}, MetricsStatFS},
		{"hostPath PV", volumeSpec{volume: claim, pv: pv(corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}})}, MetricsNone},
	} {
		if got := tc.spec.metrics(); got != tc.want {
			t.Errorf("%s: metrics %d, want %d", tc.name, got, tc.want)
		}
	}
}

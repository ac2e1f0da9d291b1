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

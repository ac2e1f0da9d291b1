package volume

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's hostPath type checks: the *OrCreate types make what is missing; the others only
// check, with upstream's messages.
func TestSetUpHostPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		typ        corev1.HostPathType
		wantErr    string
	}{
		{"unset, missing", filepath.Join(dir, "nope"), corev1.HostPathUnset, ""},
		{"directory", dir, corev1.HostPathDirectory, ""},
		{"file is not a directory", file, corev1.HostPathDirectory, "hostPath type check failed: " + file + " is not a directory"},
		{"directory or create", filepath.Join(dir, "a", "b"), corev1.HostPathDirectoryOrCreate, ""},
		{"file", file, corev1.HostPathFile, ""},
		{"directory is not a file", dir, corev1.HostPathFile, "hostPath type check failed: " + dir + " is not a file"},
		{"file or create", filepath.Join(dir, "new"), corev1.HostPathFileOrCreate, ""},
		{"socket", file, corev1.HostPathSocket, "hostPath type check failed: " + file + " is not a socket file"},
		{"block device", file, corev1.HostPathBlockDev, "hostPath type check failed: " + file + " is not a block device"},
		{"invalid", dir, "Nonsense", "Nonsense is an invalid volume type"},
		{"char device", "/dev/null", corev1.HostPathCharDev, ""},
		{"file is not a char device", file, corev1.HostPathCharDev, "hostPath type check failed: " + file + " is not a character device"},
		{"char device is not a block device", "/dev/null", corev1.HostPathBlockDev, "hostPath type check failed: /dev/null is not a block device"},
		{"backsteps refused, even untyped", dir + "/../etc", corev1.HostPathUnset, "invalid HostPath `" + dir + "/../etc`: must not contain '..'"},
		{"backsteps refused before creating", dir + "/x/../y", corev1.HostPathDirectoryOrCreate, "invalid HostPath `" + dir + "/x/../y`: must not contain '..'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			typ := tc.typ
			got, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: tc.path, Type: &typ})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.path {
				t.Fatalf("setUpHostPath = %q, %v; want %q", got, err, tc.path)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(dir, "a", "b")); err != nil || !fi.IsDir() {
		t.Errorf("DirectoryOrCreate did not make the directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Errorf("a refused DirectoryOrCreate path made %s/x", dir)
	}
	if fi, err := os.Stat(filepath.Join(dir, "new")); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		t.Errorf("FileOrCreate did not make an empty file: %v", err)
	}
}

package volume

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
)

// subPathPod is a pod with one emptyDir "work" and a container "app" that mounts it with mount.
func subPathPod(mount corev1.VolumeMount) (*corev1.Pod, *corev1.Container) {
	mount.Name, mount.MountPath = "work", "/work"
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers = []corev1.Container{{Name: "app", VolumeMounts: []corev1.VolumeMount{mount}}}
	return pod, &pod.Spec.Containers[0]
}

// Upstream makeMounts and ExpandContainerVolumeMounts: subPathExpr takes $(VAR) from the
// container's env only, every variable must have a value, and the result — like a plain subPath —
// must be relative and free of "..".
func TestExpandSubPath(t *testing.T) {
	env := []EnvVar{{Name: "POD_NAME", Value: "web-0"}, {Name: "EMPTY"}, {Name: "ROOT", Value: "/etc"}, {Name: "UP", Value: ".."}}
	for _, tc := range []struct {
		name          string
		subPath, expr string
		want, wantErr string
	}{
		{name: "no subPath", want: ""},
		{name: "plain subPath", subPath: "conf/app.conf", want: "conf/app.conf"},
		{name: "a name that starts with dots is not ..", subPath: "..conf", want: "..conf"},
		{name: "expanded from the env", expr: "logs/$(POD_NAME)", want: "logs/web-0"},
		{name: "$$ is a literal $", expr: "$$(POD_NAME)", want: "$(POD_NAME)"},
		{name: "unknown variable", expr: "$(NOPE)/$(POD_NAME)/$(ALSO_NOPE)", wantErr: "missing value for ALSO_NOPE, NOPE"},
		{name: "empty variable", expr: "x/$(EMPTY)", wantErr: "missing value for EMPTY"},
		{name: "absolute subPath", subPath: "/etc/passwd", wantErr: "error SubPath `/etc/passwd` must not be an absolute path"},
		{name: "expands to an absolute path", expr: "$(ROOT)/x", wantErr: "error SubPath `/etc/x` must not be an absolute path"},
		{name: "backstep", subPath: "a/../../b", wantErr: "unable to provision SubPath `a/../../b`: must not contain '..'"},
		{name: "expands to a backstep", expr: "$(UP)/x", wantErr: "unable to provision SubPath `../x`: must not contain '..'"},
		{name: "both set", subPath: "a", expr: "b", wantErr: `spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "b": subPathExpr and subPath are mutually exclusive`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod, c := subPathPod(corev1.VolumeMount{SubPath: tc.subPath, SubPathExpr: tc.expr})
			got, err := expandSubPath(pod, c, 0, env)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("expandSubPath = %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("expandSubPath = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// The checks behind CVE-2017-1002101 and CVE-2021-25741 (upstream doBindSubPath,
// safeOpenSubPath): a subPath that leads out of its volume through a symlink — to /, to a
// sibling directory, by an absolute link, from deeper down — is refused with upstream's message,
// whatever the container wrote into the volume; links that stay inside are followed.
func TestSubPathEscapes(t *testing.T) {
	tmp := t.TempDir()
	vol := filepath.Join(tmp, "pod", "volumes", "kubernetes.io~empty-dir", "work")
	sibling := filepath.Join(tmp, "pod", "volumes", "kubernetes.io~empty-dir", "other")
	for _, d := range []string{filepath.Join(vol, "data", "deep"), sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(vol, "data", "file"), "inside")
	write(filepath.Join(sibling, "secret"), "not yours")
	links := map[string]string{
		"root":               "/",
		"sibling":            "../other",
		"abs":                filepath.Join(sibling, "secret"),
		"data/deep/up":       "../../../other/secret",
		"data/deep/upandin":  "../../data/file", // leaves data/deep but not the volume
		"data/deep/relative": "../file",
		"datalink":           "data",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(vol, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		subPath string
		want    string // the content of the file mounted; "dir" for the data directory
		refused bool
	}{
		{subPath: "root", refused: true},
		{subPath: "root/etc/passwd", refused: true},
		{subPath: "sibling/secret", refused: true},
		{subPath: "abs", refused: true},
		{subPath: "data/deep/up", refused: true},
		{subPath: "data/file", want: "inside"},
		{subPath: "data/deep/upandin", want: "inside"},
		{subPath: "data/deep/relative", want: "inside"},
		{subPath: "datalink/file", want: "inside"},
		{subPath: "data", want: "dir"},
	} {
		t.Run(tc.subPath, func(t *testing.T) {
			pod, c := subPathPod(corev1.VolumeMount{SubPath: tc.subPath})
			mounts, err := Mounts(pod, c, map[string]string{"work": vol}, MountConfig{PodDir: filepath.Join(tmp, "pod")})
			if tc.refused {
				const msg = `failed to prepare subPath for volumeMount "work" of container "app"`
				if err == nil || err.Error() != msg || !strings.Contains(errors.Unwrap(err).Error(), "not within volume path") {
					t.Fatalf("Mounts = %+v, %v (cause %v); want %q, caused by \"not within volume path\"", mounts, err, errors.Unwrap(err), msg)
				}
				return
			}
			if err != nil || len(mounts) != 1 {
				t.Fatalf("Mounts = %+v, %v", mounts, err)
			}
			src := mounts[0].HostPath
			if tc.want == "dir" {
				if src != filepath.Join(vol, "data") {
					t.Errorf("source = %s, want the volume's data directory", src)
				}
				return
			}
			if !strings.HasPrefix(src, filepath.Join(tmp, "pod", subPathsDir, "work", "app")+"/") {
				t.Errorf("source = %s, want a pinned file under %s", src, subPathsDir)
			}
			if got := readFile(t, src); got != tc.want {
				t.Errorf("mounted file holds %q, want %q", got, tc.want)
			}
		})
	}
}

// doSafeOpen: the path was checked, then a directory on it was swapped for a symlink (the race
// of CVE-2021-25741); opening it component by component with O_NOFOLLOW refuses it.
func TestSafeOpenRefusesASwappedSymlink(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "file"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(base, "data")); err != nil { // "data" was a directory
		t.Fatal(err)
	}
	fd, err := safeOpen(filepath.Join(base, "data", "file"), base)
	if err == nil || !strings.Contains(err.Error(), "unexpected symlink found "+filepath.Join(base, "data")) {
		t.Fatalf("safeOpen = %d, %v; want the symlink refused", fd, err)
	}
	if _, err := safeOpen("/etc", base); err == nil || !strings.Contains(err.Error(), "is outside of allowed base") {
		t.Errorf("safeOpen(/etc) = %v, want outside of allowed base", err)
	}
}

// Upstream SafeMakeDir: a missing subPath becomes a directory with the volume's mode (an
// emptyDir's 0777), made inside the volume only — never through a symlink out of it.
func TestSubPathMakesMissingDirectories(t *testing.T) {
	tmp := t.TempDir()
	vol, outside := filepath.Join(tmp, "work"), filepath.Join(tmp, "outside")
	for _, d := range []string{vol, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(vol, "escape")); err != nil {
		t.Fatal(err)
	}

	pod, c := subPathPod(corev1.VolumeMount{SubPath: "logs/web-0"})
	mounts, err := Mounts(pod, c, map[string]string{"work": vol}, MountConfig{PodDir: tmp})
	if err != nil || len(mounts) != 1 || mounts[0].HostPath != filepath.Join(vol, "logs", "web-0") {
		t.Fatalf("Mounts = %+v, %v; want the new directory logs/web-0", mounts, err)
	}
	for _, d := range []string{"logs", "logs/web-0"} {
		if fi, err := os.Stat(filepath.Join(vol, d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
			t.Errorf("%s: %v, %v; want a directory with the volume's mode 0777", d, fi, err)
		}
	}

	pod, c = subPathPod(corev1.VolumeMount{SubPath: "escape/new"})
	_, err = Mounts(pod, c, map[string]string{"work": vol}, MountConfig{PodDir: tmp})
	if want := `failed to create subPath directory for volumeMount "work" of container "app"`; err == nil || err.Error() != want {
		t.Errorf("Mounts through a link out of the volume = %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("a directory was made outside the volume: %v", err)
	}
}

// Upstream doSafeMakeDir gives the new directories the volume's setuid, setgid and sticky bits
// too: a subPath in a setgid, sticky volume (an fsGroup-owned emptyDir on tmpfs) is
// dgtrwxrwxrwx, as the spec "EmptyDir … nonexistent volume subPath should have the correct mode
// and owner using FSGroup" reads it.
func TestSubPathDirectoryKeepsSpecialBits(t *testing.T) {
	vol := filepath.Join(t.TempDir(), "work")
	if err := os.Mkdir(vol, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(vol, os.ModeSetgid|os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	pod, c := subPathPod(corev1.VolumeMount{SubPath: "test-sub"})
	if _, err := Mounts(pod, c, map[string]string{"work": vol}, MountConfig{PodDir: filepath.Dir(vol)}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(vol, "test-sub"))
	if want := os.ModeDir | os.ModeSetgid | os.ModeSticky | 0o777; err != nil || fi.Mode() != want {
		t.Errorf("subPath directory: %v, %v; want mode %v", fi, err, want)
	}
}

// Upstream: a ConfigMap key mounted with subPath is a file with the key's content, and it is not
// updated when the ConfigMap changes (the bind mount holds the version the container started
// with); a container started later gets the new version.
func TestSubPathConfigMapKeyIsPinned(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	objs := shopObjects()
	p, root := newProjector(t, objs)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}
	pod.Spec.Containers = []corev1.Container{{Name: "app", VolumeMounts: []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/app/app.conf", SubPath: "app.conf"}}}}
	c := &pod.Spec.Containers[0]
	cfg := MountConfig{PodDir: filepath.Join(root, "pods", string(pod.UID))}

	dirs, err := setUpPod(ctx, p, pod)
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := Mounts(pod, c, dirs, cfg)
	if err != nil || len(mounts) != 1 || !mounts[0].ReadOnly {
		t.Fatalf("Mounts = %+v, %v; want one read-only mount", mounts, err)
	}
	src := mounts[0].HostPath
	if fi, err := os.Lstat(src); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("source %s: %v, %v; want a regular file", src, fi, err)
	}
	if got := readFile(t, src); got != "debug=true" {
		t.Fatalf("mounted file = %q, want the key's content", got)
	}

	objs.mu.Lock()
	objs.configMaps["shop/app"] = &corev1.ConfigMap{Data: map[string]string{"app.conf": "debug=false"}}
	objs.mu.Unlock()
	if _, err := setUpPod(ctx, p, pod); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dirs["config"], "app.conf")); got != "debug=false" {
		t.Fatalf("the volume's app.conf = %q after the update, want debug=false", got)
	}
	if got := readFile(t, src); got != "debug=true" {
		t.Errorf("the running container's file = %q after the update, want it unchanged", got)
	}

	restarted, err := Mounts(pod, c, dirs, cfg)
	if err != nil || len(restarted) != 1 || readFile(t, restarted[0].HostPath) != "debug=false" {
		t.Errorf("a restarted container's mount = %+v, %v; want the new version", restarted, err)
	}
}

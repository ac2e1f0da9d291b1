package volume

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"
)

// statGroup returns the mode and the group of path, not following a final symlink.
func statGroup(t *testing.T, path string) (os.FileMode, uint32) {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode(), info.Sys().(*syscall.Stat_t).Gid
}

// Upstream SetVolumeOwnership (fsGroupChangePolicy Always), as the conformance specs "Secrets …
// as non-root with defaultMode and fsGroup set" and "EmptyDir … new files should be created with
// FSGroup ownership" see it: the fsGroup owns every file and directory of the volume; a file of
// a read-only (API-data) volume gains r for owner and group (0400 → 0440), a projected token is
// 0600 → 0640, directories gain setgid and x for owner and group, an emptyDir stays 0777 with
// setgid, so files the containers create there belong to the fsGroup too. An unchanged volume is
// not rewritten on the next sync.
func TestSetUpVolumeFSGroupOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: giving files a group the test user is not in")
	}
	_, ctx := ktesting.NewTestContext(t)
	p, _ := newProjector(t, shopObjects())
	const fsGroup = 1234
	pod := volumePod()
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](fsGroup)}
	pod.Spec.Volumes[0].Secret.DefaultMode = ptr.To[int32](0o400)

	dirs, err := setUpPod(ctx, p, pod)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Join(dirs["creds"], "password"), 0o440},
		{filepath.Join(dirs["creds"], "..data", "password"), 0o440},
		{filepath.Join(dirs["creds"], "..data") + "/", os.ModeDir | os.ModeSetgid | 0o755},
		{dirs["creds"], os.ModeDir | os.ModeSetgid | 0o755},
		{filepath.Join(dirs["kube-api-access-x1"], "token"), 0o640},
		{filepath.Join(dirs["kube-api-access-x1"], "ca.crt"), 0o644},
		{dirs["scratch"], os.ModeDir | os.ModeSetgid | 0o777},
	} {
		path, err := filepath.EvalSymlinks(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		mode, gid := statGroup(t, path)
		if mode != tc.want || gid != fsGroup {
			t.Errorf("%s: mode %v group %d, want %v group %d", tc.path, mode, gid, tc.want, fsGroup)
		}
	}

	// A file a container makes in the emptyDir belongs to the fsGroup (the setgid directory).
	if err := os.WriteFile(filepath.Join(dirs["scratch"], "new"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, gid := statGroup(t, filepath.Join(dirs["scratch"], "new")); gid != fsGroup {
		t.Errorf("a new file in the emptyDir has group %d, want %d", gid, fsGroup)
	}

	// The next sync finds the secret's files as they should be: no new version.
	before, err := os.Readlink(filepath.Join(dirs["creds"], "..data"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetUpVolume(ctx, pod, &pod.Spec.Volumes[0]); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Readlink(filepath.Join(dirs["creds"], "..data")); err != nil || after != before {
		t.Errorf("..data -> %s (%v) after a sync with nothing changed, want %s still", after, err, before)
	}
}

// Without an fsGroup nothing changes owner: the files keep the kubelet's group and their modes.
func TestSetUpVolumeNoFSGroup(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	p, _ := newProjector(t, shopObjects())
	pod := volumePod()
	pod.Spec.Volumes[0].Secret.DefaultMode = ptr.To[int32](0o400)
	dirs, err := setUpPod(ctx, p, pod)
	if err != nil {
		t.Fatal(err)
	}
	path, err := filepath.EvalSymlinks(filepath.Join(dirs["creds"], "password"))
	if err != nil {
		t.Fatal(err)
	}
	if mode, gid := statGroup(t, path); mode != 0o400 || gid != uint32(os.Getegid()) {
		t.Errorf("secret file: mode %v group %d, want 0400 and group %d", mode, gid, os.Getegid())
	}
	if mode, _ := statGroup(t, dirs["scratch"]); mode != os.ModeDir|0o777 {
		t.Errorf("emptyDir mode %v, want drwxrwxrwx (no setgid)", mode)
	}
}

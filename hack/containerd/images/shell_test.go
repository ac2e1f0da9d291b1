package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The specs run `sh -c '…'` in agnhost and glibc-dns-testing and expect PATH's programs:
// `nc -v -t -w 2 IP PORT` (netcat-openbsd; the Services specs) and `hostname -f` (glibc's).
// Debian's busybox-static is built with FEATURE_SH_STANDALONE: its sh runs its own applet of a
// name before PATH's program (`nc: invalid option -- 'v'`). This builds both layers from this
// machine's programs, unpacks them and runs their /bin/sh in a chroot, as the container would.
func TestImageShellRunsPATHPrograms(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chroot into the unpacked image (CI runs as root)")
	}
	bb, err := readStatic("/bin/busybox")
	if err != nil {
		t.Fatalf("%v (hack/containerd/install.sh installs busybox-static)", err)
	}
	applets, err := busyboxApplets("/bin/busybox")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := hostToolFiles([]string{"bash", "nc=nc.openbsd", "sh=bash"})
	if err != nil {
		t.Fatal(err)
	}
	glibc, err := hostToolFiles([]string{"hostname", "sh=dash"})
	if err != nil {
		t.Fatal(err)
	}
	bashSh, err := hostToolFiles([]string{"sh=bash"})
	if err != nil {
		t.Fatal(err)
	}
	in := e2eInputs{busybox: bb, applets: applets, agnhost: []byte("agn"), agnhostVersion: "2.63.0", hostTools: tools, glibcHostname: glibc, bashSh: bashSh}
	for _, c := range []struct {
		image, script, want string
	}{
		{"registry.k8s.io/e2e-test-images/agnhost:2.63.0", "nc -h 2>&1", "OpenBSD netcat"},
		{"registry.k8s.io/e2e-test-images/glibc-dns-testing:2.0.0", "hostname -V 2>&1", "hostname 3."},
		// The applets the specs use beside them stay: busybox's own, found in PATH.
		{"registry.k8s.io/e2e-test-images/agnhost:2.63.0", "wget --help 2>&1; ls /bin/sleep", "BusyBox"},
		{"registry.k8s.io/e2e-test-images/glibc-dns-testing:2.0.0", "cat --help 2>&1", "BusyBox"},
		// busybox's sh passes a variable whose name is not an identifier on to env (the
		// ConfigMap/Secret environment specs' data-1), and its applets stay.
		{"registry.k8s.io/e2e-test-images/busybox:1.37.0-1", "env; ls --help 2>&1", "data-1=value-1"},
		{"registry.k8s.io/e2e-test-images/busybox:1.37.0-1", "ls --help 2>&1", "BusyBox"},
	} {
		images, _ := e2eImages([]string{c.image}, in)
		if len(images) != 1 {
			t.Fatalf("%s not built", c.image)
		}
		root := t.TempDir()
		layer, err := layerTar(images[0].Layer)
		if err != nil {
			t.Fatal(err)
		}
		untar(t, layer, root)
		// /proc as in a container: busybox runs its applets through /proc/self/exe, and without
		// it falls back to PATH. Mounted in a mount namespace of its own: the host's stays as it is.
		cmd := exec.Command("unshare", "--mount", "--pid", "--fork", "--mount-proc="+filepath.Join(root, "proc"),
			"chroot", root, "/bin/sh", "-c", c.script)
		cmd.Env = []string{pathEnv, "data-1=value-1"}
		out, _ := cmd.CombinedOutput() // `nc -h` exits 1; the output tells which nc ran
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%s: sh -c %q printed %q, want %q", c.image, c.script, out, c.want)
		}
	}
}

// untar unpacks a layer of ours (directories, regular files, hard and symbolic links) into dir.
func untar(t *testing.T, layer []byte, dir string) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, os.FileMode(h.Mode).Perm())
		case tar.TypeLink:
			err = os.Link(filepath.Join(dir, h.Linkname), p)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, p)
		default:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, os.FileMode(h.Mode).Perm())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

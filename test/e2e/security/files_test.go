package security

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// checkPrivate fails the test unless path exists with exactly mode perm (following symlinks)
// and, for a file that should hold a key, holds one.
func checkPrivate(t *testing.T, path string, perm fs.FileMode, holdsKey bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if fi.Mode().Perm() != perm {
		t.Errorf("%s has mode %#o, want %#o", path, fi.Mode().Perm(), perm)
	}
	if holdsKey {
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), "PRIVATE KEY-----") {
			t.Errorf("%s should hold a private key (err %v): the test is looking at the wrong file", path, err)
		}
	}
}

// checkNothingReadableByOthers fails the test for any file in dir that group or others can read
// or write, except public certificates (*.crt).
func checkNothingReadableByOthers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || strings.HasSuffix(e.Name(), ".crt") {
			continue // the current-link is checked through its target
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %#o: group or others can read it", path, fi.Mode().Perm())
		}
	}
}

// Upstream's certificate file store (k8s.io/client-go/util/certificate) writes the client
// cert+key 0600 in a 0700 cert dir, kubeadm writes the kubeconfig 0600, and the self-signed
// serving key is 0600: nobody but the kubelet's user can read the node's credentials. Checked
// after a real join, and again when the cert dir is created by the kubelet API's self-signed
// certificate rather than by TLS bootstrap (a node started with a provisioned --kubeconfig).
func TestCredentialFilesArePrivate(t *testing.T) {
	// The files are written before the process starts with a umask of 0: permissions come from
	// the code, not from the caller's umask.
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })

	n := startNode(t, "e2e-security-files", "-v", "2")
	pki := filepath.Join(n.rootDir, "pki")
	checkPrivate(t, pki, 0o700, false)
	checkPrivate(t, filepath.Join(n.rootDir, "kubeconfig"), 0o600, false)
	checkPrivate(t, filepath.Join(pki, "kubelet-client-current.pem"), 0o600, true) // the link's target
	checkPrivate(t, filepath.Join(pki, "kubelet.key"), 0o600, true)
	checkNothingReadableByOthers(t, pki)
	matches, _ := filepath.Glob(filepath.Join(pki, "kubelet-client-2*.pem"))
	if len(matches) != 1 {
		t.Errorf("want one kubelet-client-<timestamp>.pem in %s, got %v", pki, matches)
	}

	// Restart with the kubeconfig as a provisioned one and a new --cert-dir: no bootstrap, so the
	// cert dir is first created for the kubelet API's self-signed serving key.
	if err := n.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := n.proc.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("after SIGTERM: exit code %d, err %v", code, err)
	}
	servingDir := filepath.Join(n.rootDir, "serving-pki")
	args := append(replaceFlag(n.args, "--bootstrap-kubeconfig", ""), "--kubeconfig", filepath.Join(n.rootDir, "kubeconfig"),
		"--cert-dir", servingDir, "--rotate-certificates=false", "-v", "2")
	framework.StartProcess(t, minikubelet, args...)
	framework.Eventually(t, time.Minute, "the serving key in the new cert dir", func() (bool, string) {
		_, err := os.Stat(filepath.Join(servingDir, "kubelet.key"))
		return err == nil, "no kubelet.key yet"
	})
	checkPrivate(t, servingDir, 0o700, false)
	checkPrivate(t, filepath.Join(servingDir, "kubelet.key"), 0o600, true)
	checkNothingReadableByOthers(t, servingDir)
}

// replaceFlag returns args with flag's value replaced; an empty value drops the flag.
func replaceFlag(args []string, flag, value string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag && i+1 < len(args) {
			if value != "" {
				out = append(out, flag, value)
			}
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

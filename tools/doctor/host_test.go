package doctor

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// shortTempDir keeps socket paths under the 107-byte unix limit.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "doctor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Like kubeadm's PortOpenCheck: a port someone listens on fails, naming the port and how to find
// the process; a free one passes and is left free.
func TestCheckPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := int32(l.Addr().(*net.TCPAddr).Port)
	got := checkPortFree("127.0.0.1", busy)
	if got.Status != Fail || !strings.Contains(got.Message, strconv.Itoa(int(busy))) || !strings.Contains(got.Fix, "ss -ltnp 'sport = :"+strconv.Itoa(int(busy))+"'") {
		t.Errorf("busy port: %+v; want FAIL naming port %d and ss -ltnp", got, busy)
	}

	free := int32(freePort(t))
	if got := checkPortFree("127.0.0.1", free); got.Status != OK {
		t.Errorf("free port: %+v; want OK", got)
	}
	// The check closed its listener: the port can be taken again.
	again, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(free))))
	if err != nil {
		t.Fatalf("the port is not free after the check: %v", err)
	}
	again.Close()

	// 192.0.2.1 (TEST-NET-1, RFC 5737) is never an address of this machine.
	if got := checkPortFree("192.0.2.1", free); got.Status != Fail || !strings.Contains(got.Message, "not an address of this machine") {
		t.Errorf("foreign address: %+v; want FAIL saying it is not this machine's", got)
	}
}

// A directory is writable if a file can be created in it; one that does not exist is fine if its
// nearest existing parent is writable (minikubelet creates it). The check leaves nothing behind.
func TestCheckWritableDir(t *testing.T) {
	dir := t.TempDir()
	if got := checkWritableDir("--root-dir", dir); got.Status != OK || got.Message != "--root-dir "+dir+" is writable" {
		t.Errorf("existing dir: %+v", got)
	}
	missing := filepath.Join(dir, "a", "b")
	if got := checkWritableDir("--cert-dir", missing); got.Status != OK || !strings.Contains(got.Message, "does not exist yet") {
		t.Errorf("missing dir: %+v", got)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := checkWritableDir("--cert-dir", filepath.Join(file, "pki")); got.Status != Fail || !strings.Contains(got.Message, file+" is not a directory") {
		t.Errorf("under a file: %+v; want FAIL naming the file", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "file" {
		t.Errorf("the checks left files behind: %v", entries)
	}
}

func TestCheckWritableDirReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write into any directory: permissions cannot make one read-only")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	if got := checkWritableDir("--root-dir", dir); got.Status != Fail || got.Fix == "" {
		t.Errorf("read-only dir: %+v; want FAIL with a fix", got)
	}
}

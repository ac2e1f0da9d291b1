package bootstrap

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// killStoreEnv makes the test binary a child that rotates certificates until it is killed.
const killStoreEnv = "MINIKUBELET_TEST_KILL_STORE_DIR"

// A kubelet killed (SIGKILL) in the middle of a certificate rotation leaves kubelet-client-current.pem
// pointing at a complete certificate and its key — the old pair or the new one, never a torn file
// or a certificate without its key: a child swaps between two pairs as fast as it can and is killed
// at random moments; after each kill the current pair loads.
func TestStoreSurvivesSIGKILL(t *testing.T) {
	if dir := os.Getenv(killStoreEnv); dir != "" {
		var pairs [2][2][]byte
		for i := range pairs {
			for j, name := range []string{"cert", "key"} {
				data, err := os.ReadFile(filepath.Join(dir, "..", name+string(rune('0'+i))))
				if err != nil {
					os.Exit(2)
				}
				pairs[i][j] = data
			}
		}
		for n := 0; ; n++ {
			p := pairs[n%2]
			// A distinct timestamp per write, as rotations are.
			if _, err := clientStore(dir).update(p[0], p[1], time.Unix(int64(n), 0)); err != nil {
				os.Stderr.WriteString(err.Error() + "\n")
				os.Exit(2)
			}
		}
	}
	if testing.Short() {
		t.Skip("skipped in -short mode: starts 30 processes")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "pki")
	now := time.Now()
	var certs [2][]byte
	for i := range certs {
		certPEM, keyPEM := selfSigned(t, now.Add(-time.Hour), now.Add(time.Duration(i+1)*time.Hour))
		certs[i] = certPEM
		for name, data := range map[string][]byte{"cert": certPEM, "key": keyPEM} {
			if err := os.WriteFile(filepath.Join(base, name+string(rune('0'+i))), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	written := false
	for i := 0; i < 30; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreSurvivesSIGKILL$")
		cmd.Env = append(os.Environ(), killStoreEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rand.IntN(100)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("rotator %d ended by itself (%v), not by SIGKILL: %s", i, err, stderr.String())
		}
		if _, err := os.Lstat(clientStore(dir).currentPath()); os.IsNotExist(err) && !written {
			continue // killed before its first rotation finished
		}
		cert, err := clientStore(dir).current()
		if err != nil {
			t.Fatalf("after kill %d the current certificate does not load: %v", i, err)
		}
		if nb := cert.NotAfter.Unix(); nb != now.Add(time.Hour).Unix() && nb != now.Add(2*time.Hour).Unix() {
			t.Fatalf("after kill %d the current certificate is neither of the two written", i)
		}
		written = true
	}
	if !written {
		t.Fatal("no rotator got as far as one complete rotation: the test checked nothing")
	}
}

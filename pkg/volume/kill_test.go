package volume

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// killWriterEnv makes the test binary a child that rewrites a volume until it is killed.
const killWriterEnv = "MINIKUBELET_TEST_KILL_WRITER_DIR"

var killFiles = []string{"username", "password", "nested/config.yaml"}

// generation is the payload of generation g: every file is 64 KiB of one marker, so a torn file
// or a mix of generations is visible.
func generation(g int) map[string]FileProjection {
	payload := map[string]FileProjection{}
	for _, f := range killFiles {
		payload[f] = FileProjection{Data: bytes.Repeat([]byte{byte('A' + g%2)}, 64<<10), Mode: 0o644}
	}
	return payload
}

// A kubelet killed (SIGKILL) in the middle of projecting a volume leaves the old payload or the new
// one, never a torn file or a mix: a child rewrites the volume as fast as it can, alternating two
// generations, and is killed at random moments; after each kill every file a container would read
// is complete and all of them are of the same generation. The next child carries on in the same
// directory, as a restarted kubelet would.
func TestAtomicWriterSurvivesSIGKILL(t *testing.T) {
	if dir := os.Getenv(killWriterEnv); dir != "" {
		for g := 0; ; g++ {
			if _, err := (AtomicWriter{}).Write(context.Background(), dir, generation(g), nil); err != nil {
				os.Stderr.WriteString(err.Error() + "\n")
				os.Exit(2)
			}
		}
	}
	if testing.Short() {
		t.Skip("skipped in -short mode: starts 30 processes")
	}
	dir := t.TempDir()
	written := false
	for i := 0; i < 30; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicWriterSurvivesSIGKILL$")
		cmd.Env = append(os.Environ(), killWriterEnv+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rand.IntN(100)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("writer %d ended by itself (%v), not by SIGKILL: %s", i, err, stderr.String())
		}

		var gen byte
		for _, f := range killFiles {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if os.IsNotExist(err) && !written {
				continue // killed before its first write finished: nothing was ever visible
			}
			if err != nil {
				t.Fatalf("after kill %d: %s: %v", i, f, err)
			}
			if len(data) != 64<<10 || bytes.Count(data, data[:1]) != len(data) {
				t.Fatalf("after kill %d: %s is torn: %d bytes", i, f, len(data))
			}
			if gen != 0 && data[0] != gen {
				t.Fatalf("after kill %d: %s is generation %c, another file is %c: a mix of payloads", i, f, data[0], gen)
			}
			gen = data[0]
			written = true
		}
	}
	if !written {
		t.Fatal("no writer got as far as one complete write: the test checked nothing")
	}
}

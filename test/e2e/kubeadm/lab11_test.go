package kubeadm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lab11 walks lab 11's exercise 3 (labs/11-kubeadm-cluster) on this test's cluster, as a student
// does, and runs its check (`make lab-check LAB=11`) before and after: before, the check must say
// exercise 3 is missing (exit 1); after the mirror pod was saved, deleted and made again by the
// kubelet, every check passes — the mirror pods, the new UID with the same container, the join's CSR.
func lab11(t *testing.T, k func(...string) ([]byte, error), repo, out string) {
	t.Helper()
	labCheck := filepath.Join(out, "lab-check")
	build := exec.Command("go", "build", "-o", labCheck, "./labs/check")
	build.Dir = repo
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build labs/check: %v\n%s", err, b)
	}
	work := t.TempDir() // the student's repository directory: _output/labs/ goes there
	check := func() (int, string) {
		c := exec.Command(labCheck, "--lab", "11", "--kubeconfig", filepath.Join(out, "admin.kubeconfig"),
			"--node", "minikubelet-cp", "--repo-dir", work)
		b, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(b)
		} else if err != nil {
			t.Fatalf("lab-check 11: %v", err)
		}
		return 0, string(b)
	}
	if code, b := check(); code != 1 || !strings.Contains(b, "[MISSING] _output/labs/lab11-mirror-before.yaml cannot be read") {
		t.Fatalf("lab-check 11 before exercise 3: want exit 1 and the saved pod missing; got %d:\n%s", code, b)
	}
	pod := "pod/kube-scheduler-minikubelet-cp"
	saved, err := k("-n", "kube-system", "get", pod, "-o", "yaml")
	if err != nil {
		t.Fatalf("get %s: %v\n%s", pod, err, saved)
	}
	if err := os.MkdirAll(filepath.Join(work, "_output", "labs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "_output", "labs", "lab11-mirror-before.yaml"), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, b := check(); code != 1 || !strings.Contains(b, "it was not deleted") {
		t.Fatalf("lab-check 11 with the pod saved, not deleted: want exit 1; got %d:\n%s", code, b)
	}
	start := time.Now()
	if b, err := k("-n", "kube-system", "delete", pod, "--wait=true"); err != nil {
		t.Fatalf("delete %s: %v\n%s", pod, err, b)
	}
	var code int
	var b string
	for time.Since(start) < 90*time.Second {
		if code, b = check(); code == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	if code != 0 {
		t.Fatalf("lab-check 11 after exercise 3 (%v): exit %d:\n%s", time.Since(start).Round(time.Second), code, b)
	}
	t.Logf("lab-check 11 after exercise 3 (mirror pod back in %v):\n%s", time.Since(start).Round(time.Second), b)
}

package labs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// Lab 00 needs no cluster and no node: the student edits pkg/kubelet/lab00_test.go and runs
// TestLab00, which writes _output/labs/lab00.json; the check reads both. The walkthrough leaves
// the repository alone: the student's copy of lab00_test.go lives in a directory of its own that
// the check reads as --repo-dir, go test compiles it in place of the real one (-overlay), and
// TestLab00 writes its result there ($LAB_OUTPUT_DIR).
func lab00(t *testing.T) {
	repo := t.TempDir()
	real := filepath.Join(framework.RepoRoot(), "pkg", "kubelet", "lab00_test.go")
	mine := filepath.Join(repo, "pkg", "kubelet", "lab00_test.go")
	src, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	// The student's edits and test runs, one after the other: each file a minute newer than the last.
	stamp := time.Now()
	next := func() time.Time { stamp = stamp.Add(time.Minute); return stamp }
	check := func() (int, string) {
		return framework.RunToExit(t, 2*time.Minute, labCheck, "--lab", "00", "--repo-dir", repo)
	}

	// Before: the repository as cloned, TestLab00 never ran.
	writeLab00(t, mine, string(src), next())
	if code, out := check(); code != 1 || !strings.Contains(out, "[MISSING] _output/labs/lab00.json does not exist") {
		t.Fatalf("lab-check 00 before TestLab00 ran: want exit code 1 and lab00.json missing; got %d:\n%s", code, out)
	}
	// It ran with the example row only, as `go test ./...` does: still missing.
	runTestLab00(t, repo, mine, next())
	if code, out := check(); code != 1 || !strings.Contains(out, "[MISSING] lab00Pods has only the example's pod") {
		t.Fatalf("lab-check 00 with the example only: want exit code 1 and no row of the student's; got %d:\n%s", code, out)
	}
	t.Logf("lab-check 00 before the exercise (exit code 1, as it should)")

	// Exercise 3, as the README does it: a row of one's own, first predicted wrong, then right.
	const marker = "\t// which phase, which reason, how many restarts?\n"
	if !strings.Contains(string(src), marker) {
		t.Fatalf("%s no longer has the line the README's exercise 3 adds a row below: %q", real, marker)
	}
	row := func(phase, reason string) string {
		return marker + "\t{\"never-exit3\", corev1.RestartPolicyNever, []string{\"sh\", \"-c\", \"exit 3\"}, outcome{corev1." + phase + ", \"" + reason + "\", 0}},\n"
	}
	writeLab00(t, mine, strings.Replace(string(src), marker, row("PodSucceeded", "Completed"), 1), next())
	runTestLab00(t, repo, mine, next())
	if code, out := check(); code != 1 || !strings.Contains(out, "[MISSING] never-exit3: predicted {Succeeded Completed restarts=0}") {
		t.Fatalf("lab-check 00 with a wrong prediction: want exit code 1 naming the row; got %d:\n%s", code, out)
	}
	writeLab00(t, mine, strings.Replace(string(src), marker, row("PodFailed", "Error"), 1), next())
	if code, out := check(); code != 1 || !strings.Contains(out, "after TestLab00 last ran") {
		t.Fatalf("lab-check 00 after an edit, before running the test again: want exit code 1; got %d:\n%s", code, out)
	}
	runTestLab00(t, repo, mine, next())
	code, out := check()
	if code != 0 {
		t.Fatalf("lab-check 00 after the exercise: exit code %d:\n%s", code, out)
	}
	t.Logf("lab-check 00 after the walkthrough:\n%s", out)
}

// writeLab00 writes the student's lab00_test.go, modified at.
func writeLab00(t *testing.T, path, src string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// runTestLab00 runs `go test -run TestLab00 ./pkg/kubelet/` with the student's lab00_test.go in
// place of the repository's, writing lab00.json under repo, modified at (filesystems' clocks are
// coarse: the walkthrough orders its files itself). A failing row fails that test; that is the
// student's to read, not the walkthrough's error.
func runTestLab00(t *testing.T, repo, mine string, at time.Time) {
	t.Helper()
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(framework.RepoRoot(), "pkg", "kubelet", "lab00_test.go"): mine}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(repo, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(repo, "_output", "labs", "lab00.json")
	_ = os.Remove(result)
	cmd := exec.Command("go", "test", "-count=1", "-overlay", overlayFile, "-run", "^TestLab00$", "./pkg/kubelet/")
	cmd.Dir = framework.RepoRoot()
	cmd.Env = append(os.Environ(), "LAB_OUTPUT_DIR="+filepath.Dir(result))
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(result); serr != nil {
		t.Fatalf("go test -run TestLab00 wrote no lab00.json (%v): %v\n%s", serr, err, lastLines(string(out), 30))
	}
	if err := os.Chtimes(result, at, at); err != nil {
		t.Fatal(err)
	}
}

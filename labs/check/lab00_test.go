package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Lab 00 needs no cluster: its check reads pkg/kubelet/lab00_test.go and the lab00.json that
// TestLab00 writes. Here, in a directory laid out like the repository: the check fails before
// the exercise (TestLab00 never ran; it ran with only the example; it ran before the last edit;
// a prediction was wrong) and passes after it.
func TestLab00Check(t *testing.T) {
	example := lab00Row{Name: lab00Example, RestartPolicy: "Always", Program: []string{"sh", "-c", "exit 3"},
		Predicted: "{Running CrashLoopBackOff restarts=1}", Seen: []string{"{Running CrashLoopBackOff restarts=1}"}, OK: true}
	own := lab00Row{Name: "never-exit3", RestartPolicy: "Never", Program: []string{"sh", "-c", "exit 3"},
		Predicted: "{Failed Error restarts=0}", Seen: []string{"{Pending ContainerCreating restarts=0}", "{Failed Error restarts=0}"}, OK: true}
	wrong := own
	wrong.Predicted, wrong.OK = "{Succeeded Completed restarts=0}", false
	sameAsExample := example
	sameAsExample.Name = "copy"

	testMod := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		rows   []lab00Row // nil: no lab00.json
		ranAt  time.Time
		code   int
		output string
	}{
		{"exercise skipped: TestLab00 never ran", nil, time.Time{}, 1, "[MISSING] _output/labs/lab00.json does not exist: TestLab00 has not run"},
		{"only the example", []lab00Row{example}, testMod.Add(time.Minute), 1, "[MISSING] lab00Pods has only the example's pod"},
		{"a copy of the example under another name", []lab00Row{example, sameAsExample}, testMod.Add(time.Minute), 1, "[MISSING] lab00Pods has only the example's pod"},
		{"edited after the last run", []lab00Row{example, own}, testMod.Add(-time.Minute), 1, "changed (10:00:00.000) after TestLab00 last ran (09:59:00.000)"},
		{"a wrong prediction", []lab00Row{example, wrong}, testMod.Add(time.Minute), 1,
			"[MISSING] never-exit3: predicted {Succeeded Completed restarts=0}, the API showed {Pending ContainerCreating restarts=0} → {Failed Error restarts=0}"},
		{"done", []lab00Row{example, own}, testMod.Add(time.Minute), 0, "[OK]      1 row(s) of your own: never-exit3 (Never, \"sh -c exit 3\")"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			test := filepath.Join(repo, lab00TestFile)
			if err := os.MkdirAll(filepath.Dir(test), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(test, []byte("package kubelet\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(test, testMod, testMod); err != nil {
				t.Fatal(err)
			}
			if tc.rows != nil {
				result := filepath.Join(repo, lab00Result)
				out, _ := json.Marshal(tc.rows)
				if err := os.MkdirAll(filepath.Dir(result), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(result, out, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(result, tc.ranAt, tc.ranAt); err != nil {
					t.Fatal(err)
				}
			}
			var out, errOut bytes.Buffer
			// No cluster: the kubeconfig does not exist, and lab 00 does not need it.
			code := run(context.Background(), []string{"--lab", "0", "--repo-dir", repo, "--kubeconfig", filepath.Join(repo, "none")},
				func(string) string { return "" }, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String(), tc.output) {
				t.Errorf("exit code %d, want %d, and output containing %q; output:\n%s%s", code, tc.code, tc.output, out.String(), errOut.String())
			}
		})
	}
}

package kubelet

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Lab 0, "one pod's life, step by step" (labs/00-one-pods-life/README.md): predict what the
// Kubelet makes of a pod, then let it run. Each row of lab00Pods is a pod with one container
// running program under restartPolicy, and the status you predict the API will show at some
// moment of its life (within 2 minutes of the node's clock): the pod's phase, the container's
// reason ("" while it runs; else its waiting reason, CrashLoopBackOff…, or its terminated
// reason, Completed, Error…) and its restart count.
//
// Programs are the fake runtime's tiny shell (fakeruntime/doc.go, "Container programs"):
// "sleep infinity", "sleep 5", `sh -c "exit 3"`, `sh -c "echo hi; sleep 2; exit 1"`…
//
// Run:  go test -run TestLab00 -v ./pkg/kubelet/
// Then: make lab-check LAB=00
var lab00Pods = []podOutcome{
	// The example: a container that exits 3 under restartPolicy Always is started again at once,
	// exits again, and then waits in CrashLoopBackOff with one restart.
	{"example-crash-loop", corev1.RestartPolicyAlways, []string{"sh", "-c", "exit 3"}, outcome{corev1.PodRunning, "CrashLoopBackOff", 1}},

	// Exercise 3: your rows here. For example: the same program under restartPolicy Never —
	// which phase, which reason, how many restarts?
}

// lab00Row is one row of lab00.json, what `make lab-check LAB=00` reads.
type lab00Row struct {
	Name          string   `json:"name"`
	RestartPolicy string   `json:"restartPolicy"`
	Program       []string `json:"program"`
	Predicted     string   `json:"predicted"`
	Seen          []string `json:"seen"` // every status the API showed, in order, up to the first that matched
	OK            bool     `json:"ok"`
}

// TestLab00 runs every row of lab00Pods and writes what it saw to lab00.json (under
// $LAB_OUTPUT_DIR, default _output/labs in the repository) for the lab's check.
func TestLab00(t *testing.T) {
	var rows []lab00Row
	for _, row := range lab00Pods {
		t.Run(row.name, func(t *testing.T) {
			seen, ok := observe(t, row)
			r := lab00Row{Name: row.name, RestartPolicy: string(row.restartPolicy), Program: row.program, Predicted: row.want.String(), OK: ok}
			for _, o := range seen {
				r.Seen = append(r.Seen, o.String())
			}
			rows = append(rows, r)
			if !ok {
				t.Errorf("predicted %v; the API showed, in order: %v", row.want, seen)
			} else {
				t.Logf("predicted %v; the API showed, in order: %v", row.want, seen)
			}
		})
	}
	dir := os.Getenv("LAB_OUTPUT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "_output", "labs") // go test runs in pkg/kubelet
	}
	out, err := json.MarshalIndent(rows, "", "  ")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "lab00.json"), append(out, '\n'), 0o644)
	}
	if err != nil {
		t.Fatalf("write lab00.json for the lab's check: %v", err)
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Lab 00, one pod's life step by step: no cluster. The student adds rows to lab00Pods in
// pkg/kubelet/lab00_test.go — a pod, and the status predicted for it — and runs TestLab00, which
// drives each pod through the Kubelet in-process and writes what the API showed to
// _output/labs/lab00.json. The check reads both files under --repo-dir.
const (
	lab00TestFile = "pkg/kubelet/lab00_test.go"
	lab00Result   = "_output/labs/lab00.json"
	lab00Example  = "example-crash-loop"
	lab00Run      = "go test -run TestLab00 -v ./pkg/kubelet/"
)

// lab00Row is one row of lab00.json (pkg/kubelet/lab00_test.go writes it).
type lab00Row struct {
	Name          string   `json:"name"`
	RestartPolicy string   `json:"restartPolicy"`
	Program       []string `json:"program"`
	Predicted     string   `json:"predicted"`
	Seen          []string `json:"seen"`
	OK            bool     `json:"ok"`
}

func lab00() []check {
	const ran = "TestLab00 ran after your last change to " + lab00TestFile
	var rows []lab00Row // read by the first check, for the others
	return []check{
		{name: ran, run: func(ctx context.Context, e *env) result {
			test, err := os.Stat(filepath.Join(e.cfg.repoDir, lab00TestFile))
			if err != nil {
				return missing(lab00TestFile+" cannot be read: "+err.Error(),
					"run the check in the repository's top directory (make lab-check does), or pass --repo-dir")
			}
			path := filepath.Join(e.cfg.repoDir, lab00Result)
			out, rerr := os.ReadFile(path)
			var resultMod time.Time
			if rerr == nil {
				if fi, err := os.Stat(path); err == nil {
					resultMod = fi.ModTime()
				}
				if err := json.Unmarshal(out, &rows); err != nil {
					rerr = fmt.Errorf("not the JSON TestLab00 writes: %w", err)
				}
			}
			return lab00Ran(test.ModTime(), resultMod, rerr)
		}},
		{name: "a row of your own in lab00Pods", needs: []string{ran}, run: func(context.Context, *env) result {
			return lab00OwnRow(rows)
		}},
		{name: "every prediction held", needs: []string{ran}, run: func(context.Context, *env) result {
			return lab00Predictions(rows)
		}},
	}
}

// lab00Ran: lab00.json exists (readErr nil) and was written after lab00_test.go last changed.
// Pure.
func lab00Ran(testMod, resultMod time.Time, readErr error) result {
	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		return missing(lab00Result+" does not exist: TestLab00 has not run", "run it: "+lab00Run)
	case readErr != nil:
		return missing(lab00Result+": "+readErr.Error(), "run TestLab00 again: "+lab00Run)
	case resultMod.Before(testMod):
		return missing(fmt.Sprintf("%s changed (%s) after TestLab00 last ran (%s)", lab00TestFile, testMod.Format("15:04:05.000"), resultMod.Format("15:04:05.000")),
			"run it again: "+lab00Run)
	}
	return passed("TestLab00 ran at %s, after your last change to %s", resultMod.Format(time.TimeOnly), lab00TestFile)
}

// lab00OwnRow: a row besides the example, with another pod than the example's (its restart
// policy or its program differs). Pure.
func lab00OwnRow(rows []lab00Row) result {
	var example *lab00Row
	for i := range rows {
		if rows[i].Name == lab00Example {
			example = &rows[i]
		}
	}
	var own []string
	for _, r := range rows {
		if r.Name == lab00Example || (example != nil && r.RestartPolicy == example.RestartPolicy && slices.Equal(r.Program, example.Program)) {
			continue
		}
		own = append(own, fmt.Sprintf("%s (%s, %q)", r.Name, r.RestartPolicy, strings.Join(r.Program, " ")))
	}
	if len(own) == 0 {
		return missing("lab00Pods has only the example's pod",
			"exercise 3: add a row to lab00Pods in "+lab00TestFile+" — another restartPolicy or program, and your prediction — then "+lab00Run)
	}
	return passed("%d row(s) of your own: %s", len(own), strings.Join(own, ", "))
}

// lab00Predictions: every row's predicted status appeared. Pure.
func lab00Predictions(rows []lab00Row) result {
	var wrong []string
	for _, r := range rows {
		if !r.OK {
			wrong = append(wrong, fmt.Sprintf("%s: predicted %s, the API showed %s", r.Name, r.Predicted, strings.Join(r.Seen, " → ")))
		}
	}
	if len(wrong) > 0 {
		return missing(strings.Join(wrong, "; "),
			"read what the API showed and why (the README's table; step through it under Delve), fix the prediction, run "+lab00Run+" again")
	}
	return passed("all %d prediction(s) held", len(rows))
}

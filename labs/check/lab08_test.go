package main

import (
	"errors"
	"strings"
	"testing"
)

// Lab 08: the checker's own execs and port-forward pass on any running pod, so they cannot tell
// whether the student did anything. Exercises 1 and 4 leave files in the container that only
// their commands write: skipped, `cat /tmp/lab08` and `ls /tmp/knocked` fail with busybox's
// message and exit code 1, and the checks say which exercise to do.
func TestLab08SkippedExercises(t *testing.T) {
	noFile := func(path string) execResult {
		return execResult{stderr: "cat: can't open '" + path + "': No such file or directory\n", exitCode: 1}
	}
	streamBroke := execResult{exitCode: -1, err: errors.New("error dialing backend")}
	exec1 := []struct {
		name string
		res  execResult
		ok   bool
		says string
	}{
		{"exercise 1 skipped", noFile(lab08Exec), false, "do exercise 1: " + lab08ExecCmd},
		{"another line written", execResult{stdout: "hello\n"}, false, `holds "hello", not "written by exec"`},
		{"the exec failed", streamBroke, false, "error dialing backend"},
		{"done", execResult{stdout: "written by exec\n"}, true, `holds "written by exec"`},
	}
	for _, tc := range exec1 {
		t.Run("exec/"+tc.name, func(t *testing.T) {
			if r := execLeftFile(tc.res); r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
	run4 := []struct {
		name string
		res  execResult
		ok   bool
		says string
	}{
		{"exercise 4 skipped", execResult{stderr: "ls: /tmp/knocked: No such file or directory\n", exitCode: 1}, false, "do exercise 4 (source labs/env.sh first): " + lab08KnockedCmd},
		{"the exec failed", streamBroke, false, "error dialing backend"},
		{"done", execResult{stdout: "/tmp/knocked\n"}, true, "the kubelet API ran your command for the admin"},
	}
	for _, tc := range run4 {
		t.Run("run/"+tc.name, func(t *testing.T) {
			if r := runLeftFile(tc.res); r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

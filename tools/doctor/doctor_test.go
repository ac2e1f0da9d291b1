package doctor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

// Every check prints one line, its status in a 6-wide column; a fix follows, indented under the
// message, with its continuation lines indented under the fix's text.
func TestResultString(t *testing.T) {
	tests := []struct {
		name string
		in   Result
		want string
	}{
		{"ok", Result{Status: OK, Message: "apiserver reachable"}, "[OK]   apiserver reachable\n"},
		{"skip", Result{Status: Skip, Message: "token: not checked"}, "[SKIP] token: not checked\n"},
		{"fail with fix", Result{Status: Fail, Message: "port in use", Fix: "stop it"},
			"[FAIL] port in use\n       fix: stop it\n"},
		{"warn with a two-line fix", Result{Status: Warn, Message: "old", Fix: "upgrade\nkubectl version"},
			"[WARN] old\n       fix: upgrade\n            kubectl version\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.String(); got != tc.want {
				t.Errorf("String() =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// The summary counts what happened; any FAIL makes doctor fail (exit status 1), a WARN does not.
func TestSummarize(t *testing.T) {
	tests := []struct {
		name       string
		statuses   []Status
		want       string
		wantFailed bool
	}{
		{"all ok", []Status{OK, OK}, "doctor: 2 of 2 checks passed", false},
		{"a warning passes", []Status{OK, Warn}, "doctor: 1 of 2 checks passed (1 warning)", false},
		{"a failure fails", []Status{OK, Fail, Skip, Warn, Warn},
			"doctor: 1 of 5 checks failed (2 warnings, 1 skipped): fix the [FAIL] lines above, then run minikubelet doctor again", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var results []Result
			for _, s := range tc.statuses {
				results = append(results, Result{Status: s})
			}
			got, failed := Summarize(results)
			if got != tc.want || failed != tc.wantFailed {
				t.Errorf("Summarize = %q, %v; want %q, %v", got, failed, tc.want, tc.wantFailed)
			}
		})
	}
}

// While the node's client certificate works, minikubelet does not use the bootstrap credentials
// (pkg/bootstrap LoadOrBootstrap), so their failures become warnings; nothing else changes.
func TestSoftenIf(t *testing.T) {
	fail := Result{Status: Fail, Message: "token rejected", Fix: "new token"}
	if got := softenIf(false, fail, "/k"); got != fail {
		t.Errorf("without a node certificate: %+v, want it unchanged", got)
	}
	got := softenIf(true, fail, "/root/kubeconfig")
	if got.Status != Warn || !strings.HasPrefix(got.Message, "token rejected") || !strings.Contains(got.Message, "/root/kubeconfig") || got.Fix != fail.Fix {
		t.Errorf("with a node certificate: %+v, want a WARN naming the kubeconfig", got)
	}
	ok := Result{Status: OK, Message: "fine"}
	if got := softenIf(true, ok, "/k"); got != ok {
		t.Errorf("an OK result changed: %+v", got)
	}
}

// With nothing to join with, doctor fails the kubeconfig check, skips what needs an API server,
// still checks everything local, and writes exactly the results it returns.
func TestRunWithoutCredentials(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	root := filepath.Join(shortTempDir(t), "root")
	var out bytes.Buffer
	results, err := Run(ctx, Config{
		Kubeconfig: filepath.Join(root, "kubeconfig"), CertDir: filepath.Join(root, "pki"), RootDir: root,
		Address: "127.0.0.1", Port: int32(freePort(t)), KubeletVersion: "v1.36.3",
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var printed strings.Builder
	for _, r := range results {
		printed.WriteString(r.String())
	}
	if out.String() != printed.String() {
		t.Errorf("printed\n%s\nbut returned\n%s", out.String(), printed.String())
	}
	// No bootstrap kubeconfig: no token or RBAC lines, one line for each other check.
	want := []struct {
		text   string
		status Status
	}{
		{"no --bootstrap-kubeconfig", Fail}, {"not written yet", OK}, {"version skew", Skip},
		{"built-in fake runtime", OK}, {"--cert-dir", OK}, {"--root-dir", OK}, {"kubelet API address", OK},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d:\n%s", len(results), len(want), out.String())
	}
	for i, w := range want {
		if r := results[i]; r.Status != w.status || !strings.Contains(r.Message, w.text) {
			t.Errorf("check %d: %s; want %v mentioning %q", i+1, r, w.status, w.text)
		}
	}
	if _, failed := Summarize(results); !failed {
		t.Error("Summarize: not failed, want failed")
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("doctor created %s (err %v); it must change nothing", root, err)
	}
}

package fakeruntime

import (
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// recordSink keeps what a program writes, stderr lines prefixed with "E: ".
type recordSink struct{ b strings.Builder }

func (s *recordSink) write(stream runtimeapi.LogStreamType, text string) error {
	if stream == runtimeapi.Stderr {
		text = "E: " + text
	}
	s.b.WriteString(text)
	return nil
}

// runScript runs sh -c script to its end; sleeps return at once and are counted.
func runSh(t *testing.T, script string, turns int) (out string, code int32, sleeps int) {
	t.Helper()
	now := time.Date(2026, 11, 27, 5, 50, 0, 0, time.UTC)
	v := view{fs: newRootfs(nil, "/"), now: func() time.Time { return now },
		env: []*runtimeapi.KeyValue{{Key: "GREETING", Value: []byte("hi there")}}}
	p := &process{program: parseProgram([]string{"sh", "-c", script}, unknownNotFound)}
	var s recordSink
	for range turns {
		stop, _, err := p.run(v, &s)
		if err != nil {
			t.Fatal(err)
		}
		switch stop.kind {
		case stepExit:
			return s.b.String(), stop.code, sleeps
		case stepSleep:
			sleeps++
			now = now.Add(stop.d)
		case stepForever:
			return s.b.String(), -1, sleeps
		}
	}
	return s.b.String(), -2, sleeps
}

// TestShellControlFlow runs the shell's loops, conditionals, variables and expansions as the
// Kubernetes docs' examples use them, and checks what they print.
func TestShellControlFlow(t *testing.T) {
	tests := []struct {
		name, script, want string
		code               int32
	}{
		{"the docs' counter pod", `i=0; while true; do echo "$i: $(date)"; i=$((i+1)); sleep 1; [ $i -ge 3 ] && exit 0; done`,
			"0: Fri Nov 27 05:50:00 UTC 2026\n1: Fri Nov 27 05:50:01 UTC 2026\n2: Fri Nov 27 05:50:02 UTC 2026\n", 0},
		{"the docs' hello cronjob", "date; echo Hello from the Kubernetes cluster",
			"Fri Nov 27 05:50:00 UTC 2026\nHello from the Kubernetes cluster\n", 0},
		{"until", "n=3; until [ $n -eq 0 ]; do echo $n; n=$((n-1)); done; echo liftoff", "3\n2\n1\nliftoff\n", 0},
		{"for over words and a substitution", "for i in a b; do for j in $(seq 2); do echo $i$j; done; done", "a1\na2\nb1\nb2\n", 0},
		{"if elif else", "for n in 1 2 3; do if [ $n = 1 ]; then echo one; elif [ $n = 2 ]; then echo two; else echo many; fi; done",
			"one\ntwo\nmany\n", 0},
		{"if without else and a false condition is status 0", "if false; then echo no; fi", "", 0},
		{"multi-line script", "if true\nthen\n  echo yes\nfi\nwhile false\ndo\n  echo no\ndone", "yes\n", 0},
		{"an inner for loop left by break starts afresh", "for i in 1 2; do for j in a b c; do [ $j = b ] && break; echo $i$j; done; done",
			"1a\n2a\n", 0},
		{"exec runs its command", "exec echo replaced", "replaced\n", 0},
		{"break and continue", "for i in 1 2 3 4; do [ $i = 2 ] && continue; [ $i = 4 ] && break; echo $i; done", "1\n3\n", 0},
		{"environment, braces, quotes", `echo "${GREETING}!" '$GREETING' $UNSET.`, "hi there! $GREETING .\n", 0},
		{"unquoted expansion splits into fields", `X="a   b"; echo $X; echo "$X"`, "a b\na   b\n", 0},
		{"$? and exit with it", "false; echo $?; sh_status=$?; exit $((sh_status + 4))", "1\n", 4},
		{"arithmetic precedence", "echo $(( (2+3)*4 - 10/3 % 2 )) $((-i + 7 > 6))", "19 1\n", 0},
		{"arithmetic error", "echo $((1/0)); echo after", "E: sh: arithmetic: divide by zero\nafter\n", 0},
		{"backquotes", "echo `echo nested`", "nested\n", 0},
		{"date formats", "date +%Y-%m-%dT%H:%M:%S; date +%s", "2026-11-27T05:50:00\n1795758600\n", 0},
		{"keyword only at the start", "echo done if then", "done if then\n", 0},
		{"a substitution's unknown command", "x=$(nosuch); echo [$x]", "E: sh: nosuch: not found\n[]\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code, _ := runSh(t, tc.script, 100)
			if out != tc.want || code != tc.code {
				t.Errorf("got %q, exit %d; want %q, exit %d", out, code, tc.want, tc.code)
			}
		})
	}
}

// TestBusyLoopPauses: a loop that never waits pauses every maxJumps jumps, so it never holds the
// runtime's lock for long and ends with the container.
func TestBusyLoopPauses(t *testing.T) {
	_, code, sleeps := runSh(t, "while true; do :; done", 5)
	if code != -2 || sleeps != 5 {
		t.Errorf("exit %d after %d pauses; want it still running (-2) after 5 pauses", code, sleeps)
	}
}

// TestControlFlowSyntaxErrors pins the compiler's errors.
func TestControlFlowSyntaxErrors(t *testing.T) {
	tests := map[string]string{
		"while true; do echo":            `sh: syntax error: unexpected end of file (expecting "done")`,
		"done":                           `sh: syntax error: unexpected "done"`,
		"if true; then echo; done":       `sh: syntax error: unexpected "done"`,
		"for i in 1 2; echo $i":          `sh: syntax error: expecting "do" after for i`,
		"echo $(date":                    `sh: syntax error: missing ")"`,
		"true && while true; do :; done": `sh: the fake runtime's shell cannot join "while" with && or ||: put it on its own line`,
	}
	for script, want := range tests {
		_, err := parseScriptSteps(script, unknownNotFound)
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", script, err, want)
		}
	}
}

// TestDocsShellIdioms: echo's options, printenv with several names and [[ … ]], as the docs'
// downward-API pods use them.
func TestDocsShellIdioms(t *testing.T) {
	tests := []struct{ script, want string }{
		{`echo -en '\n'; printenv GREETING; echo -e 'a\tb\c'; echo -E 'x\n'`, "\nhi there\na\tbx\\n\n"},
		{`printenv GREETING NOPE; echo $?`, "hi there\n1\n"},
		{`if [[ -e /etc ]]; then echo yes; fi; [[ x = y ]] || echo no`, "yes\nno\n"},
	}
	for _, tc := range tests {
		if out, _, _ := runSh(t, tc.script, 10); out != tc.want {
			t.Errorf("%s: got %q, want %q", tc.script, out, tc.want)
		}
	}
}

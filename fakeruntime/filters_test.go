package fakeruntime

import (
	"net/netip"
	"os"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestPipesAndFilters runs the pipes and filters of the docs' examples: the localhost sidecar's
// `wget … | head -n 4`, and grep, wc, tail, printf as task pages type them.
func TestPipesAndFilters(t *testing.T) {
	tests := []struct {
		name, script, want string
		code               int32
	}{
		{"head -n and -N", "seq 10 | head -n 3; seq 10 | head -2", "1\n2\n3\n1\n2\n", 0},
		{"tail -n and a file", "seq 5 > /tmp/f; tail -n 2 /tmp/f; tail -1 /tmp/f; tail -n3 /tmp/f", "4\n5\n5\n3\n4\n5\n", 0},
		{"tail -n +K starts at line K", "seq 4 > /tmp/f; tail -n+3 /tmp/f; tail -n +1 /tmp/f | head -n 1; tail -n +9 /tmp/f", "3\n4\n1\n", 0},
		{"grep, -v, -c, -i, and its status", "seq 12 | grep 1; seq 3 | grep -v 2; seq 12 | grep -c 1; echo Hi | grep -i hi; echo x | grep y; echo $?",
			"1\n10\n11\n12\n1\n3\n4\nHi\n1\n", 0},
		{"grep -q sets only the status", "echo ready | grep -q ready && echo found", "found\n", 0},
		{"wc", "seq 3 | wc -l; echo a b | wc -w; echo abc | wc -c; seq 3 > /tmp/n; wc -l /tmp/n", "3\n2\n4\n3 /tmp/n\n", 0},
		{"rev, the docs' indexed Job", "echo 3 > /tmp/data.txt; rev /tmp/data.txt; echo abc | rev", "3\ncba\n", 0},
		{"cd and pwd: relative paths start there", "mkdir /data; cd /data && echo hi > f && pwd && cat /data/f; cd /nope; echo $?; cd; pwd",
			"/data\nhi\nE: sh: cd: can't cd to /nope: No such file or directory\n2\n/root\n", 0},
		{"a pipeline's status is the last command's", "false | true; echo $?", "0\n", 0},
		{"a skipped left side skips the pipe", "false && echo x | grep x; echo after", "after\n", 0},
		{"pipe output of a substitution", `echo "$(seq 3 | tail -n 1)"`, "3\n", 0},
		{"printf reuses its format", `printf 'UNCHANGED_REFERENCE=%s\n' '$(PROTOCOL)'; printf '%s-%d\n' a 1 b 2; printf '%5s|%%\n' x`,
			"UNCHANGED_REFERENCE=$(PROTOCOL)\na-1\nb-2\n    x|%\n", 0},
		{"nslookup of a Service's name fails without DNS", "until nslookup myservice.default.svc.cluster.local; do echo waiting for myservice; exit 3; done",
			"E: nslookup: can't resolve 'myservice.default.svc.cluster.local'\nwaiting for myservice\n", 3},
		{"nslookup localhost answers from /etc/hosts", "nslookup localhost | grep Address",
			"Address 1: 127.0.0.1\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code, _ := runSh(t, tc.script, 10)
			if out != tc.want || code != tc.code {
				t.Errorf("got %q, exit %d; want %q, exit %d", out, code, tc.want, tc.code)
			}
		})
	}
}

// TestTailFollowWaits: tail -f (the docs' log-shipper sidecar) prints the file's last lines,
// then, every followPoll, what was written to it since, until the container stops; in the
// background it does not wait.
func TestTailFollowWaits(t *testing.T) {
	now := time.Date(2026, 11, 27, 5, 50, 0, 0, time.UTC)
	v := view{fs: newRootfs(nil, "/"), now: func() time.Time { return now }}
	p := &process{program: parseProgram([]string{"sh", "-c", "seq 3 > /tmp/log; tail -n 1 -F /tmp/log; echo never"}, unknownNotFound)}
	var s recordSink
	for turn, write := range []string{"4\n", "", "5\n6\n"} {
		stop, _, err := p.run(v, &s)
		if err != nil || stop.kind != stepSleep || stop.d != followPoll {
			t.Fatalf("turn %d: stopped at %v (%v), want a pause of %s", turn, stop, err, followPoll)
		}
		if err := v.fs.writeFile("/tmp/log", []byte(write), true); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := p.run(v, &s); err != nil || s.b.String() != "3\n4\n5\n6\n" {
		t.Errorf("tail -F printed %q (%v), want the last line and then each line written", s.b.String(), err)
	}
	out, code, _ := runSh(t, "tail -F /tmp/none; echo never", 3)
	if out != "E: tail: can't open '/tmp/none': No such file or directory\n" || code != -2 {
		t.Errorf("a missing file: got %q, exit %d; want its error and still running (-2)", out, code)
	}
	out, code, _ = runSh(t, "tail -f /tmp/none & echo on", 10)
	if out != "E: tail: can't open '/tmp/none': No such file or directory\non\n" || code != 0 {
		t.Errorf("in the background: got %q, exit %d", out, code)
	}
}

// TestIDFromSecurityContext: id prints what the kubelet put in the CRI security context —
// runAsUser, runAsGroup and the supplemental groups (fsGroup among them), as the docs' security
// context page shows.
func TestIDFromSecurityContext(t *testing.T) {
	tests := []struct {
		sc   *runtimeapi.LinuxContainerSecurityContext
		args []string
		want string
	}{
		{nil, nil, "uid=0(root) gid=0(root) groups=0(root)\n"},
		{&runtimeapi.LinuxContainerSecurityContext{RunAsUser: &runtimeapi.Int64Value{Value: 1000},
			RunAsGroup: &runtimeapi.Int64Value{Value: 3000}, SupplementalGroups: []int64{2000, 4000}}, nil,
			"uid=1000 gid=3000 groups=2000,3000,4000\n"},
		{&runtimeapi.LinuxContainerSecurityContext{RunAsUser: &runtimeapi.Int64Value{Value: 2000}}, []string{"-u"}, "2000\n"},
	}
	for _, tc := range tests {
		out, _, code := runBuiltin(view{user: tc.sc}, append([]string{"id"}, tc.args...))
		if out != tc.want || code != 0 {
			t.Errorf("id %v with %v: %q (%d), want %q", tc.args, tc.sc, out, code, tc.want)
		}
	}
	v := view{hostname: "web-0", serveIP: netip.MustParseAddr("127.88.0.7")}
	if out, _, code := runBuiltin(v, []string{"nslookup", "web-0"}); code != 0 || out != "Server:    (none, from /etc/hosts)\n\nName:      web-0\nAddress 1: 127.88.0.7\n" {
		t.Errorf("nslookup of the pod's hostname: %q (%d)", out, code)
	}
}

// TestLogGetsWholeLines: like containerd, the log gets a line once its newline comes, and the
// last one at exit — so `cat FILE` of a file with no final newline followed by `echo` makes one
// line, as the docs' downward API volume pod shows.
func TestLogGetsWholeLines(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	id := e.createContainer(t, sb, containerConfig("app", "sh", "-c", "echo -n a; echo b; echo -n c >&2; echo -n d"))
	e.startContainer(t, id)
	st := e.waitExited(t, id)
	data, err := os.ReadFile(st.GetLogPath())
	if err != nil {
		t.Fatal(err)
	}
	const ts = "2016-10-06T00:17:09.669794202Z "
	if want := ts + "stdout F ab\n" + ts + "stdout F d\n" + ts + "stderr F c\n"; string(data) != want {
		t.Errorf("log = %q, want %q", data, want)
	}
}

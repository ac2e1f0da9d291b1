package fake

import (
	"fmt"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestParseProgram pins the container program grammar documented in doc.go.
func TestParseProgram(t *testing.T) {
	echo := func(s string) step { return step{kind: stepEcho, text: s, stream: runtimeapi.Stdout} }
	echoErr := func(s string) step { return step{kind: stepEcho, text: s, stream: runtimeapi.Stderr} }
	sleep := func(d time.Duration) step { return step{kind: stepSleep, d: d} }
	exit := func(c int32) step { return step{kind: stepExit, code: c} }
	forever := step{kind: stepForever}

	tests := []struct {
		name string
		argv []string
		mode unknownMode
		want []step
	}{
		{"empty command runs forever like pause", nil, unknownRunsForever, []step{forever}},
		{"sleep infinity", []string{"sleep", "infinity"}, unknownRunsForever, []step{forever}},
		{"sleep inf", []string{"/bin/sleep", "inf"}, unknownRunsForever, []step{forever}},
		{"sleep N seconds", []string{"sleep", "10"}, unknownRunsForever, []step{sleep(10 * time.Second)}},
		{"sleep fractional with unit", []string{"sleep", "1.5m"}, unknownRunsForever, []step{sleep(90 * time.Second)}},
		{"sleep bad interval fails like coreutils", []string{"sleep", "abc"}, unknownRunsForever,
			[]step{echoErr("sleep: invalid time interval 'abc'"), exit(1)}},
		{"unknown command is a server", []string{"nginx", "-g", "daemon off;"}, unknownRunsForever, []step{forever}},
		{"unknown command succeeds in exec", []string{"nginx", "-t"}, unknownSucceeds, nil},
		{"cat inspects the container's mounts", []string{"cat", "/tmp/healthy"}, unknownSucceeds, []step{{kind: stepInspect, argv: []string{"cat", "/tmp/healthy"}}}},
		{"echo words", []string{"echo", "hello", "world"}, unknownRunsForever, []step{echo("hello world")}},
		{"sh -c exit N", []string{"sh", "-c", "exit 3"}, unknownRunsForever, []step{exit(3)}},
		{"exit code wraps at 256", []string{"sh", "-c", "exit 257"}, unknownRunsForever, []step{exit(1)}},
		{"exit with bad number", []string{"sh", "-c", "exit x"}, unknownRunsForever,
			[]step{echoErr("sh: exit: Illegal number: x"), exit(2)}},
		{"sequence", []string{"/bin/sh", "-c", "echo hi; sleep 5; exit 2"}, unknownRunsForever,
			[]step{echo("hi"), sleep(5 * time.Second), exit(2)}},
		{"newlines and && split too, quotes group words", []string{"bash", "-c", "echo 'a  b' && false\ntrue"}, unknownRunsForever,
			[]step{echo("a  b"), exit(1)}},
		{"echo -n", []string{"echo", "-n", "x"}, unknownRunsForever, []step{{kind: stepEcho, text: "x", stream: runtimeapi.Stdout, noEOL: true}}},
		{"echo to stderr", []string{"sh", "-c", "echo oops >&2"}, unknownRunsForever, []step{echoErr("oops")}},
		{"command then args", []string{"sh", "-c", "sleep 1; echo done"}, unknownRunsForever,
			[]step{sleep(time.Second), echo("done")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseProgram(tc.argv, tc.mode)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("parseProgram(%q) = %v, want %v", tc.argv, got, tc.want)
			}
		})
	}
}

// TestFormatLogLines pins the CRI log format the kubelet and crictl parse.
func TestFormatLogLines(t *testing.T) {
	got := formatLogLines(t0(), runtimeapi.Stdout, "one\ntwo\n")
	want := "2016-10-06T00:17:09.669794202Z stdout F one\n2016-10-06T00:17:09.669794202Z stdout F two\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestResolveLogPath(t *testing.T) {
	tests := []struct {
		name, root, dir, path, want string
		wantErr                     bool
	}{
		{"relative joins the sandbox log directory", "/root", "/var/log/pods/x", "c/0.log", "/var/log/pods/x/c/0.log", false},
		{"absolute is refused", "/root", "/var/log/pods/x", "/abs/0.log", "", true},
		{"climbing out is refused", "/root", "/var/log/pods/x", "../../../etc/x", "", true},
		{"no log directory uses LogRoot", "/root", "", "c/0.log", "/root/c/0.log", false},
		{"neither discards", "", "", "c/0.log", "", false},
		{"no log path discards", "/root", "/d", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveLogPath(tc.root, tc.dir, tc.path)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestNormalizeImageRef pins containerd's short-name expansion, which the kubelet relies on when
// it compares images.
func TestNormalizeImageRef(t *testing.T) {
	tests := map[string]string{
		"busybox":                     "docker.io/library/busybox:latest",
		"busybox:1.36":                "docker.io/library/busybox:1.36",
		"nginx/nginx":                 "docker.io/nginx/nginx:latest",
		"registry.k8s.io/pause:3.10":  "registry.k8s.io/pause:3.10",
		"localhost:5000/app":          "localhost:5000/app:latest",
		"localhost/app":               "localhost/app:latest",
		"busybox@sha256:abc":          "docker.io/library/busybox@sha256:abc",
		"docker.io/library/alpine:3":  "docker.io/library/alpine:3",
		"quay.io/coreos/etcd:v3.6.0":  "quay.io/coreos/etcd:v3.6.0",
		"example.com:443/team/img:v1": "example.com:443/team/img:v1",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := normalizeImageRef(in); got != want {
				t.Errorf("normalizeImageRef(%q) = %q, want %q", in, got, want)
			}
			if got := repository(want); strings.ContainsAny(got[strings.LastIndex(got, "/"):], ":@") {
				t.Errorf("repository(%q) = %q still has a tag or digest", want, got)
			}
		})
	}
}

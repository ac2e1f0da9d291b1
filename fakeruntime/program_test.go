package fakeruntime

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestParseProgram pins the container program grammar documented in doc.go, step by step (as
// ContainerStatus --verbose shows the program).
func TestParseProgram(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		mode unknownMode
		want []string
	}{
		{"empty command runs forever like pause", nil, unknownRunsForever, []string{"forever"}},
		{"sleep infinity", []string{"sleep", "infinity"}, unknownRunsForever, []string{"forever"}},
		{"sleep inf", []string{"/bin/sleep", "inf"}, unknownRunsForever, []string{"forever"}},
		{"sleep N seconds", []string{"sleep", "10"}, unknownRunsForever, []string{"sleep 10s"}},
		{"sleep fractional with unit", []string{"sleep", "1.5m"}, unknownRunsForever, []string{"sleep 1m30s"}},
		{"sleep bad interval fails like coreutils", []string{"sleep", "abc"}, unknownRunsForever,
			[]string{`fail 1 "sleep: invalid time interval 'abc'"`}},
		{"unknown command is a server that says it is not modelled", []string{"nginx", "-g", "daemon off;"}, unknownRunsForever,
			[]string{`forever "minikubelet fake runtime: \"nginx\" is not modelled; this container runs until stopped (what is modelled: docs/fake-runtime.md)"`}},
		{"unknown command succeeds in exec", []string{"nginx", "-t"}, unknownSucceeds, []string{"noop nginx -t"}},
		{"cat FILE is a built-in", []string{"cat", "/tmp/healthy"}, unknownSucceeds, []string{"cat /tmp/healthy"}},
		{"cat without arguments reads stdin", []string{"cat"}, unknownSucceeds, []string{"cat stdin"}},
		{"echo words", []string{"echo", "hello", "world"}, unknownRunsForever, []string{`echo "hello world"`}},
		{"exec form: > is a word, not a redirection", []string{"echo", "a", ">", "f"}, unknownSucceeds, []string{`echo "a > f"`}},
		{"sh -c exit N", []string{"sh", "-c", "exit 3"}, unknownRunsForever, []string{"exit 3"}},
		{"exit code wraps at 256", []string{"sh", "-c", "exit 257"}, unknownRunsForever, []string{"exit 1"}},
		{"exit with bad number", []string{"sh", "-c", "exit x"}, unknownRunsForever,
			[]string{`exit 2 "sh: exit: Illegal number: x"`}},
		{"exit without a number exits with $?", []string{"sh", "-c", "false; exit"}, unknownRunsForever, []string{"false", "exit $?"}},
		{"sequence", []string{"/bin/sh", "-c", "echo hi; sleep 5; exit 2"}, unknownRunsForever,
			[]string{`echo "hi"`, "sleep 5s", "exit 2"}},
		{"&& and || run on $?, quotes group words, newlines separate", []string{"bash", "-c", "echo 'a  b' && false\ntrue || echo \"x;y\""}, unknownRunsForever,
			[]string{`echo "a  b"`, "&& false", "true", `|| echo "x;y"`}},
		{"flags before c", []string{"sh", "-ec", "true"}, unknownRunsForever, []string{"true"}},
		{"echo -n", []string{"echo", "-n", "x"}, unknownRunsForever, []string{`echo -n "x"`}},
		{"echo to stderr", []string{"sh", "-c", "echo oops >&2"}, unknownRunsForever, []string{`echo "oops" >&2`}},
		{"redirections", []string{"sh", "-c", "echo bye > /dev/termination-log; echo more>>/tmp/log 2>&1; ls /x 2>/dev/null"}, unknownRunsForever,
			[]string{`echo "bye" >/dev/termination-log`, `echo "more" >>/tmp/log 2>&1`, "ls /x 2>/dev/null"}},
		{"a quoted 2 is a word", []string{"sh", "-c", "echo '2'>f"}, unknownRunsForever, []string{`echo "2" >f`}},
		{"&> sends both streams", []string{"sh", "-c", "ls /x &> /tmp/out"}, unknownRunsForever, []string{"ls /x >/tmp/out 2>&1"}},
		{"the docs' liveness example", []string{"/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"}, unknownRunsForever,
			[]string{"touch /tmp/healthy", "sleep 30s", "rm -f /tmp/healthy", "sleep 10m0s"}},
		{"background and comments", []string{"sh", "-c", "serve tcp 9000 & # a server\nsleep 1 &"}, unknownRunsForever,
			[]string{"serve tcp 9000 &", "sleep 1s &"}},
		{"serve", []string{"serve", "http", "8080", "/healthz=200", "/ready=/tmp/ready", "/=/www"}, unknownRunsForever,
			[]string{"serve http 8080 /healthz=200 /ready=/tmp/ready /=/www"}},
		{"serve grpc", []string{"serve", "grpc", "9090", "NOT_SERVING"}, unknownRunsForever, []string{"serve grpc 9090 NOT_SERVING"}},
		{"serve with a bad port", []string{"serve", "tcp", "0"}, unknownRunsForever, []string{`fail 2 "serve: bad port '0': give 1 to 65535"`}},
		{"busybox httpd goes to the background", []string{"httpd", "-p", "8080", "-h", "/www"}, unknownRunsForever, []string{"serve http 8080 /=/www &"}},
		{"httpd -f stays in the foreground", []string{"httpd", "-f"}, unknownRunsForever, []string{"serve http 80 /=."}},
		{"unterminated quote", []string{"sh", "-c", "echo 'x"}, unknownRunsForever, []string{`exit 2 "sh: syntax error: unterminated quoted string"`}},
		{"dangling &&", []string{"sh", "-c", "true &&"}, unknownRunsForever, []string{`exit 2 "sh: syntax error: unexpected end of file"`}},
		{"&& continues on the next line", []string{"sh", "-c", "true &&\necho y"}, unknownRunsForever, []string{"true", `&& echo "y"`}},
		{"backslashes escape, outside and inside double quotes", []string{"sh", "-c", `echo a\ b "c\"d\x" 'e\f' g\
h`}, unknownRunsForever,
			[]string{`echo "a b c\"d\\x e\\f gh"`}},
		{"a # inside a word is no comment", []string{"sh", "-c", "echo a#b # c"}, unknownRunsForever, []string{`echo "a#b"`}},
		{"no input redirection", []string{"sh", "-c", "cat < /etc/hosts"}, unknownRunsForever,
			[]string{`exit 2 "sh: the fake runtime's shell has no input redirection (<): give the file as an argument"`}},
		{"only descriptors 1 and 2", []string{"sh", "-c", "echo x >&3"}, unknownRunsForever,
			[]string{`exit 2 "sh: 3: bad file descriptor: only 1 and 2 can be redirected"`}},
		{"a redirection needs a file", []string{"sh", "-c", "echo x > ; true"}, unknownRunsForever,
			[]string{`exit 2 "sh: syntax error: a redirection without a file before \";\""`}},
		{"two redirections at once", []string{"sh", "-c", "echo x > > f"}, unknownRunsForever,
			[]string{`exit 2 "sh: syntax error: unexpected redirection"`}},
		{"a pipe", []string{"sh", "-c", "echo x | cat"}, unknownRunsForever,
			[]string{`echo "x" |`, "cat stdin"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, st := range parseProgram(tc.argv, tc.mode) {
				got = append(got, st.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("parseProgram(%q) =\n%s\nwant\n%s", tc.argv, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
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

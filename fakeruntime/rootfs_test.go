package fakeruntime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fsFixture is a container view with three CRI mounts, as the kubelet makes them: a read-only
// ConfigMap volume (with the atomic writer's "..data"), a writable emptyDir and the
// termination-log file.
type fsFixture struct {
	v                      view
	config, cache, termLog string // host paths of the mounts
	outsideFile            string // a host file no mount holds
}

func newFSFixture(t *testing.T) *fsFixture {
	t.Helper()
	dir := t.TempDir()
	f := &fsFixture{config: filepath.Join(dir, "config"), cache: filepath.Join(dir, "cache"), termLog: filepath.Join(dir, "termination-log")}
	f.outsideFile = filepath.Join(dir, "host-secret")
	for _, d := range []string{f.config, filepath.Join(f.config, "..data"), f.cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range map[string]string{filepath.Join(f.config, "key"): "value-from-configmap", f.termLog: "", f.outsideFile: "host only"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink in a writable volume that points out of it: a container would resolve it inside
	// its own root, so the fake must never follow it to the host.
	if err := os.Symlink(f.outsideFile, filepath.Join(f.cache, "escape")); err != nil {
		t.Fatal(err)
	}
	f.v = view{
		env:      []*runtimeapi.KeyValue{{Key: "DB_USER", Value: []byte("admin")}, {Key: "MODE", Value: []byte("prod")}},
		hostname: "web-1",
		fs: newRootfs([]*runtimeapi.Mount{
			{ContainerPath: "/etc/config", HostPath: f.config, Readonly: true},
			{ContainerPath: "/cache", HostPath: f.cache},
			{ContainerPath: "/dev/termination-log", HostPath: f.termLog},
			{ContainerPath: "/var/run/secrets/kubernetes.io/serviceaccount", HostPath: f.config, Readonly: true},
		}, "/app"),
	}
	return f
}

// runScript runs `sh -c script` as ExecSync would, to its end (it must not wait).
func runScript(t *testing.T, v view, script string) (stdout, stderr string, status int32) {
	t.Helper()
	var out, errOut bytes.Buffer
	p := &process{program: parseProgram([]string{"sh", "-c", script}, unknownSucceeds)}
	stop, _, err := p.run(v, newStreamOutput(&out, &errOut, false))
	if err != nil || stop.kind != stepExit {
		t.Fatalf("%q stopped at %v (err %v), want it to exit", script, stop, err)
	}
	return out.String(), errOut.String(), stop.code
}

// TestContainerFilesystem pins what the built-ins do to a container's filesystem: mounts read
// and write the host (read-only ones refuse, as busybox reports EROFS), every other path lives
// in the container's layer, and nothing else of the host is reachable.
func TestContainerFilesystem(t *testing.T) {
	f := newFSFixture(t)
	tests := []struct {
		name, script        string
		wantOut, wantErrOut string
		wantStatus          int32
	}{
		{"env", "env", "DB_USER=admin\nMODE=prod\n", "", 0},
		{"printenv NAME", "printenv MODE", "prod\n", "", 0},
		{"printenv of an unset NAME fails", "printenv NOPE", "", "", 1},
		{"hostname", "hostname", "web-1\n", "", 0},
		{"cat a mounted file", "cat /etc/config/key", "value-from-configmap", "", 0},
		{"cat outside every mount and the layer", "cat /etc/passwd", "", "cat: can't open '/etc/passwd': No such file or directory\n", 1},
		{"cat climbing out of a mount", "cat /etc/config/../../etc/passwd", "", "cat: can't open '/etc/config/../../etc/passwd': No such file or directory\n", 1},
		{"a symlink out of a volume is not followed to the host", "cat /cache/escape", "", "cat: can't open '/cache/escape': Permission denied\n", 1},
		{"ls a mount hides the atomic writer's internals", "ls /etc/config", "key\n", "", 0},
		{"ls shows mount points and the layer", "ls /etc", "config\n", "", 0},
		{"ls an empty layer directory prints nothing", "ls /tmp", "", "", 0},
		{"ls nothing", "ls /nope", "", "ls: /nope: No such file or directory\n", 1},
		{"parents of a mount exist", "test -d /var/run/secrets && ls /var/run/secrets/kubernetes.io", "serviceaccount\n", "", 0},
		{"a read-only mount refuses writes", "echo x > /etc/config/key", "", "sh: can't create /etc/config/key: Read-only file system\n", 1},
		{"and rm", "rm /etc/config/key", "", "rm: can't remove '/etc/config/key': Read-only file system\n", 1},
		{"and touch", "touch /etc/config/new", "", "touch: /etc/config/new: Read-only file system\n", 1},
		{"a mount point cannot be removed", "rm -rf /cache", "", "rm: can't remove '/cache': Device or resource busy\n", 1},
		{"the layer: touch, test, rm", "touch /tmp/healthy && test -f /tmp/healthy && rm /tmp/healthy; [ -e /tmp/healthy ] || echo gone",
			"gone\n", "", 0},
		{"test of a missing file fails quietly", "test -f /tmp/none", "", "", 1},
		{"[ needs its ]", "[ -f /tmp/none", "", "sh: [: missing ]\n", 2},
		{"string and number tests", "[ abc = abc ] && [ 3 -gt 2 ] && test -n x && ! test -z x && echo ok", "ok\n", "", 0},
		{"echo > and >> then cat", "echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f", "one\ntwo\n", "", 0},
		{"> truncates", "echo long > /tmp/t; echo s > /tmp/t; cat /tmp/t", "s\n", "", 0},
		{"a file needs its directory", "touch /nodir/f", "", "touch: /nodir/f: No such file or directory\n", 1},
		{"redirection into a missing directory", "echo x > /nodir/f", "", "sh: can't create /nodir/f: nonexistent directory\n", 1},
		{"mkdir -p, ls, rm -r", "mkdir -p /data/a/b && touch /data/a/b/c && ls /data/a/b && rm -r /data && ls /data",
			"c\n", "ls: /data: No such file or directory\n", 1},
		{"mkdir of an existing directory", "mkdir /tmp", "", "mkdir: can't create directory '/tmp': File exists\n", 1},
		{"rm of a directory needs -r", "mkdir /d; rm /d", "", "rm: can't remove '/d': Is a directory\n", 1},
		{"rm -f of a missing file is fine", "rm -f /tmp/none", "", "", 0},
		{"relative paths start at the working directory", "echo w > file && cat /app/file && ls", "w\nfile\n", "", 0},
		{"stderr to a file, stdout to stderr", "cat /none 2> /tmp/err; cat /tmp/err >&2", "", "cat: can't open '/none': No such file or directory\n", 0},
		{"/dev/null swallows", "cat /none 2>/dev/null || echo failed; echo x > /dev/null; cat /dev/null", "failed\n", "", 0},
		{"; goes on after a failure, the last status counts", "false; echo after", "after\n", "", 0},
		{"|| recovers, && stops", "false || echo recovered && false && echo never", "recovered\n", "", 1},
		{"exit without a number keeps $?", "cat /none 2>/dev/null; exit", "", "", 1},
		{"ln -s in a volume; the link is never followed out of it", "ln -s / /cache/root && ls /cache/root",
			"", "ls: /cache/root: Permission denied\n", 1},
		{"ln -s in a volume to a file inside it", "echo in > /cache/in; ln -s in /cache/alias && cat /cache/alias", "in\n", "", 0},
		{"ln -s where a file is", "ln -s / /cache/in", "", "ln: /cache/in: File exists\n", 1},
		{"no links in the layer", "ln -s / /tmp/root", "", "ln: /tmp/root: Operation not permitted\n", 1},
		{"no hard links", "ln /cache/in /cache/hard", "", "ln: only ln -s TARGET LINK is modelled\n", 1},
		{"a file mount: its directory lists it", "ls /dev && ls /dev/termination-log", "null\ntermination-log\n/dev/termination-log\n", "", 0},
		{"a file mount is not a directory", "cat /dev/termination-log/x", "", "cat: can't open '/dev/termination-log/x': Not a directory\n", 1},
		{"a pipe into cat, grep and wc", "echo x | cat; printf 'a\\nb\\na\\n' | grep a | wc -l; cat /none | head", "x\n2\n", "cat: can't open '/none': No such file or directory\n", 0},
		{"no pipe into a loop", "echo x | while read l; do echo $l; done", "", "sh: the fake runtime's shell cannot pipe into \"while\": only into a simple command (head, grep, wc, …)\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, status := runScript(t, f.v, tc.script)
			if out != tc.wantOut || errOut != tc.wantErrOut || status != tc.wantStatus {
				t.Errorf("%q = %q, %q, %d; want %q, %q, %d", tc.script, out, errOut, status, tc.wantOut, tc.wantErrOut, tc.wantStatus)
			}
		})
	}

	// What went through a writable mount is on the host, and nothing else is.
	if _, _, status := runScript(t, f.v, `echo "bye" > /dev/termination-log; mkdir /cache/sub && echo kept > /cache/sub/f`); status != 0 {
		t.Fatalf("writes to writable mounts: status %d", status)
	}
	for p, want := range map[string]string{f.termLog: "bye\n", filepath.Join(f.cache, "sub", "f"): "kept\n", f.outsideFile: "host only"} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("host file %s = %q (err %v), want %q", p, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(f.config, "new")); !os.IsNotExist(err) {
		t.Errorf("a read-only mount was written to: %v", err)
	}
}

// A runtime's bind mount resolves its source once, when the container is created (upstream's
// subPath bind mount relies on it): a directory of a shared volume that another container
// replaces by a symlink to the host afterwards must not lead this container out of its mount.
func TestMountSourceSwappedForASymlink(t *testing.T) {
	dir := t.TempDir()
	vol, outside := filepath.Join(dir, "vol"), filepath.Join(dir, "outside")
	for _, d := range []string{filepath.Join(vol, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range map[string]string{filepath.Join(vol, "sub", "f"): "mine", filepath.Join(outside, "f"): "host only"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := view{fs: newRootfs([]*runtimeapi.Mount{{ContainerPath: "/data", HostPath: filepath.Join(vol, "sub")}}, "")}
	if out, _, _ := runScript(t, v, "cat /data/f"); out != "mine" {
		t.Fatalf("cat /data/f = %q before the swap, want mine", out)
	}
	if err := os.Rename(filepath.Join(vol, "sub"), filepath.Join(vol, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(vol, "sub")); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runScript(t, v, "cat /data/f")
	if out != "" || status == 0 {
		t.Errorf("cat /data/f after the swap = %q, %q, %d; want it refused", out, errOut, status)
	}
}

// TestTerminationLogWithoutMount pins that with no mount at /dev/termination-log, writing there
// lands in the container's layer, as on a real node.
func TestTerminationLogWithoutMount(t *testing.T) {
	v := view{fs: newRootfs(nil, "")}
	if out, errOut, status := runScript(t, v, `echo "bye" > /dev/termination-log && cat /dev/termination-log`); out != "bye\n" || status != 0 {
		t.Errorf("got %q, %q, %d", out, errOut, status)
	}
}

// TestLayerIsBounded pins that the in-memory layer cannot grow without bound.
func TestLayerIsBounded(t *testing.T) {
	fs := newRootfs(nil, "")
	big := bytes.Repeat([]byte("x"), maxLayerBytes/2+1)
	if err := fs.writeFile("/tmp/a", big, false); err != nil {
		t.Fatal(err)
	}
	if err := fs.writeFile("/tmp/b", big, false); err == nil || errText(err) != "No space left on device" {
		t.Errorf("second half of the layer: %v, want ENOSPC", err)
	}
	if err := fs.writeFile("/tmp/a", big, false); err != nil { // rewriting a file reuses its space
		t.Errorf("rewrite: %v", err)
	}
	if err := fs.remove("/tmp/a", false); err != nil || fs.writeFile("/tmp/b", big, false) != nil {
		t.Errorf("after rm the space is free again: %v", err)
	}
}

// TestLivenessExecExample drives the Kubernetes docs' liveness-exec pod on the fake clock
// (tasks/configure-pod-container/configure-liveness-readiness-startup-probes): its exec probe
// `cat /tmp/healthy` succeeds for 30 s, then fails, and the file lives in the container's layer
// only: a new container of the pod starts without it.
func TestLivenessExecExample(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("liveness-exec"))
	cfg := containerConfig("liveness", "/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600")
	id := e.createContainer(t, sb, cfg)
	e.startContainer(t, id)
	probe := func(id string) (string, int32) {
		t.Helper()
		resp, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"cat", "/tmp/healthy"}, Timeout: 1})
		if err != nil {
			t.Fatalf("ExecSync: %v", err)
		}
		return string(resp.GetStdout()) + string(resp.GetStderr()), resp.GetExitCode()
	}
	if out, code := probe(id); code != 0 || out != "" {
		t.Errorf("probe at 0 s: exit %d %q, want success", code, out)
	}
	e.clock.Step(29 * time.Second)
	if _, code := probe(id); code != 0 {
		t.Errorf("probe at 29 s: exit %d, want success", code)
	}
	e.clock.Step(time.Second) // the program wakes on another goroutine and removes the file
	poll(t, e.ctx, func() bool { _, code := probe(id); return code != 0 })
	if out, code := probe(id); code != 1 || out != "cat: can't open '/tmp/healthy': No such file or directory\n" {
		t.Errorf("probe at 30 s: exit %d %q, want busybox's failure", code, out)
	}
	if st := e.containerStatus(t, id); st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Errorf("container %v, want RUNNING (sleep 600)", st.GetState())
	}

	// The kubelet restarts it: a new container instance has a fresh layer.
	if _, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"touch", "/tmp/x"}}); err == nil {
		t.Error("ExecSync in an exited container succeeded")
	}
	cfg.Metadata.Attempt = 1
	cfg.Command = []string{"sleep", "infinity"}
	next := e.createContainer(t, sb, cfg)
	e.startContainer(t, next)
	if out, code := probe(next); code != 1 || !strings.Contains(out, "No such file") {
		t.Errorf("new container: exit %d %q, want /tmp/healthy gone", code, out)
	}
}

package cri_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// toolsDir returns the directory hack/tools/crictl.sh prints, building crictl and critest the
// first time. A build failure fails the test with the build's output.
func toolsDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "hack", "tools", "crictl.sh")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("build crictl with %s: %v\n%s", script, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// crictlPath is $CRICTL or the cached build.
func crictlPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CRICTL"); p != "" {
		return p
	}
	return filepath.Join(toolsDir(t), "crictl")
}

// env is a standalone fake runtime — `minikubelet fake-runtime serve`, a real process, as a user
// runs it — and a crictl pointed at it.
type env struct {
	t        *testing.T
	ctx      context.Context
	endpoint string // unix://…/fake-runtime.sock
	socket   string
	crictl   string
	config   string // crictl.yaml pointing at the fake
	dir      string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	crictl := crictlPath(t)
	_, ctx := ktesting.NewTestContext(t)
	dir, err := os.MkdirTemp("", "crie2e") // short: unix socket paths are limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	socket := filepath.Join(dir, "fake-runtime.sock")
	serve := framework.StartProcess(t, minikubelet, "fake-runtime", "serve", "--socket", socket)
	framework.Eventually(t, 30*time.Second, "the fake runtime's sockets", func() (bool, string) {
		if serve.Exited() {
			t.Fatalf("minikubelet fake-runtime serve exited:\n%s", serve.Log())
		}
		_, err1 := os.Stat(socket)
		_, err2 := os.Stat(socket + ".admin")
		return err1 == nil && err2 == nil, fmt.Sprint(err1, err2)
	})
	endpoint := "unix://" + socket
	config := filepath.Join(dir, "crictl.yaml")
	yaml := "runtime-endpoint: " + endpoint + "\nimage-endpoint: " + endpoint + "\ntimeout: 10\n"
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, endpoint: endpoint, socket: socket, crictl: crictl, config: config, dir: dir}
}

// run runs crictl against the fake and returns its stdout; a non-zero exit fails the test.
func (e *env) run(args ...string) string {
	e.t.Helper()
	out, err := e.tryRun(args...)
	if err != nil {
		e.t.Fatalf("crictl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (e *env) tryRun(args ...string) (string, error) {
	e.t.Helper()
	full := append([]string{
		"--config", e.config, // ours, not /etc/crictl.yaml
		"--runtime-endpoint", e.endpoint, "--image-endpoint", e.endpoint, "--timeout", "10s",
	}, args...)
	cmd := exec.CommandContext(e.ctx, e.crictl, full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// writeJSON writes v as JSON into the test directory and returns the path.
func (e *env) writeJSON(name string, v any) string {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) podConfig(name string) string {
	return e.writeJSON(name+"-pod.json", map[string]any{
		"metadata":      map[string]any{"name": name, "namespace": "default", "uid": name + "-uid", "attempt": 1},
		"labels":        map[string]string{"app": name},
		"log_directory": filepath.Join(e.dir, "pods", name),
		"linux":         map[string]any{},
	})
}

func (e *env) containerConfig(name string, command ...string) string {
	return e.writeJSON(name+"-container.json", map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": "busybox"},
		"command":  command,
		"log_path": name + "/0.log",
		"linux":    map[string]any{},
	})
}

// wantContains fails the test unless out contains every string of want.
func wantContains(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output does not contain %q:\n%s", what, w, out)
		}
	}
}

// inspectField reads a top-level field of "crictl inspect"/"inspectp" JSON's status.
func inspectStatus(t *testing.T, out string) map[string]any {
	t.Helper()
	var doc struct {
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("inspect output is not JSON: %v\n%s", err, out)
	}
	return doc.Status
}

// TestCrictlLifecycle walks a pod through crictl the way an operator debugs a node.
func TestCrictlLifecycle(t *testing.T) {
	e := newEnv(t)

	wantContains(t, "version", e.run("version"), "RuntimeName:  minikubelet-fake", "RuntimeApiVersion:  v1")
	wantContains(t, "info", e.run("info"), `"type": "RuntimeReady"`, `"type": "NetworkReady"`)

	wantContains(t, "pull", e.run("pull", "busybox"), "Image is up to date for sha256:")
	wantContains(t, "images", e.run("images"), "docker.io/library/busybox", "latest")

	pod := strings.TrimSpace(e.run("runp", e.podConfig("web")))
	if len(pod) != 64 {
		t.Fatalf("runp printed %q, want a 64-character sandbox ID", pod)
	}
	wantContains(t, "pods", e.run("pods"), pod[:13], "Ready", "web", "default")
	podStatus := inspectStatus(t, e.run("inspectp", pod))
	if ip := podStatus["network"].(map[string]any)["ip"]; ip != "127.88.0.2" {
		t.Errorf("inspectp network.ip = %v, want 127.88.0.2", ip)
	}

	ctr := strings.TrimSpace(e.run("create", pod, e.containerConfig("app", "sh", "-c", "echo hello from fake; sleep infinity"), e.podConfig("web")))
	if len(ctr) != 64 {
		t.Fatalf("create printed %q, want a 64-character container ID", ctr)
	}
	wantContains(t, "ps -a after create", e.run("ps", "-a"), ctr[:13], "Created", "app")
	wantContains(t, "start", e.run("start", ctr), ctr)
	wantContains(t, "ps", e.run("ps"), ctr[:13], "Running", "app", pod[:13])
	st := inspectStatus(t, e.run("inspect", ctr))
	if st["state"] != "CONTAINER_RUNNING" {
		t.Errorf("inspect state = %v, want CONTAINER_RUNNING", st["state"])
	}
	wantContains(t, "logs", e.run("logs", ctr), "hello from fake")
	wantContains(t, "exec -s", e.run("exec", "-s", ctr, "echo", "from", "exec"), "from exec")
	if out, err := e.tryRun("exec", "-s", ctr, "sh", "-c", "exit 3"); err == nil {
		t.Errorf("exec of a failing command succeeded: %s", out)
	}

	e.run("stop", ctr)
	st = inspectStatus(t, e.run("inspect", ctr))
	if st["state"] != "CONTAINER_EXITED" || st["exitCode"] != float64(137) {
		t.Errorf("after stop: state %v exitCode %v, want CONTAINER_EXITED 137", st["state"], st["exitCode"])
	}
	wantContains(t, "ps -a after stop", e.run("ps", "-a"), "Exited")
	e.run("rm", ctr)
	if out := e.run("ps", "-a", "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("ps -a after rm lists %q", out)
	}
	e.run("stopp", pod)
	wantContains(t, "pods after stopp", e.run("pods"), "NotReady")
	e.run("rmp", pod)
	if out := e.run("pods", "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("pods after rmp lists %q", out)
	}
	e.run("rmi", "busybox")
	if out := e.run("images", "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("images after rmi lists %q", out)
	}
}

// faultCLI runs `minikubelet fake-runtime VERB ARGS… --socket <the fake's socket>`.
func (e *env) faultCLI(args ...string) string {
	e.t.Helper()
	code, out := framework.RunToExit(e.t, time.Minute, minikubelet, append(append([]string{"fake-runtime"}, args...), "--socket", e.socket)...)
	if code != 0 {
		e.t.Fatalf("minikubelet fake-runtime %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// TestCrictlSeesInjectedFaults checks that faults injected with `minikubelet fake-runtime …` (and
// its admin API) show in crictl as they would for a crashed container or a broken sandbox.
func TestCrictlSeesInjectedFaults(t *testing.T) {
	e := newEnv(t)
	admin := fakeruntime.NewAdminClient(e.socket + ".admin")
	e.run("pull", "busybox")
	pod := strings.TrimSpace(e.run("runp", e.podConfig("db")))
	ctr := strings.TrimSpace(e.run("create", pod, e.containerConfig("db", "sleep", "infinity"), e.podConfig("db")))
	e.run("start", ctr)

	wantContains(t, "kill-container", e.faultCLI("kill-container", ctr, "--exit-code", "42"), "exited with code 42")
	wantContains(t, "ps -a after kill", e.run("ps", "-a", "--state", "exited"), ctr[:13], "Exited", "db")
	st := inspectStatus(t, e.run("inspect", ctr))
	if st["exitCode"] != float64(42) || st["reason"] != "Error" {
		t.Errorf("after kill: exitCode %v reason %v, want 42 Error", st["exitCode"], st["reason"])
	}

	e.faultCLI("sandbox-not-ready", pod)
	wantContains(t, "pods after sandbox fault", e.run("pods"), pod[:13], "NotReady")

	if err := admin.Inject(e.ctx, "fail-pulls", fakeruntime.FaultArgs{Image: "nginx", Count: 1, Message: "registry unreachable"}); err != nil {
		t.Fatal(err)
	}
	out, err := e.tryRun("pull", "nginx")
	if err == nil {
		t.Errorf("pull with an injected failure succeeded: %s", out)
	}
	wantContains(t, "failed pull", out, "registry unreachable")
	e.run("pull", "nginx")

	e.faultCLI("runtime-not-ready", "--reason", "LabBroken", "--message", "broken on purpose")
	wantContains(t, "info when not ready", e.run("info"), `"reason": "LabBroken"`, "broken on purpose")
	e.faultCLI("runtime-ready")
	if out := e.run("info"); strings.Contains(out, "LabBroken") {
		t.Errorf("runtime-ready did not clear the fault:\n%s", out)
	}
	wantContains(t, "state", e.faultCLI("state"), ctr, pod)
}

package kuberuntime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A failed exec hook is reported in upstream's words, with the command's output; the container
// and pod are named (upstream handlerRunner.Run).
func TestExecHookFailureMessage(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	id := podStatus(t, ctx, m, pod).FindContainer("app").ID
	h := &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "echo nope >&2; exit 3"}}}
	msg, err := m.runHook(ctx, pod, &pod.Spec.Containers[0], id, "", h)
	want := `Exec lifecycle hook ([sh -c echo nope >&2; exit 3]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'sh -c echo nope >&2; exit 3' exited with 3: nope` + "\n" + `, message: "nope\n"`
	if err == nil || msg != want {
		t.Errorf("runHook = %q, %v\nwant %q", msg, err, want)
	}
	ok := &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 0"}}}
	if msg, err := m.runHook(ctx, pod, &pod.Spec.Containers[0], id, "", ok); err != nil || msg != "" {
		t.Errorf("a successful hook says %q, %v", msg, err)
	}
}

// A hook's port is a number or the name of one of the container's ports (upstream resolvePort).
func TestContainerPort(t *testing.T) {
	c := &corev1.Container{Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	for port, want := range map[string]int{"80": 80, "http": 8080} {
		if got, err := containerPort(c, port); err != nil || got != want {
			t.Errorf("containerPort(%q) = %d, %v; want %d", port, got, err, want)
		}
	}
	for _, bad := range []string{"0", "70000", "https"} {
		if _, err := containerPort(c, bad); err == nil {
			t.Errorf("containerPort(%q) accepted", bad)
		}
	}
}

// The termination message comes from the file mounted at terminationMessagePath, at most its
// last 4 KiB; an empty or missing file with FallbackToLogsOnError sends the reader to the log
// (upstream getTerminationMessage).
func TestReadTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mount := func(host string) []*runtimeapi.Mount {
		return []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: host}}
	}
	long := strings.Repeat("a", 5000) + "END"
	tests := []struct {
		name     string
		mounts   []*runtimeapi.Mount
		fallback bool
		want     string
		wantLogs bool
	}{
		{"the file", mount(write("bye", "bye")), false, "bye", false},
		{"only its last 4 KiB", mount(write("long", long)), false, long[len(long)-4096:], false},
		{"empty, no fallback", mount(write("empty", "")), false, "", false},
		{"empty, fallback: read the log", mount(write("empty2", "")), true, "", true},
		{"missing file, fallback", mount(filepath.Join(dir, "gone")), true, "", true},
		{"no such mount", nil, false, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, logs := readTerminationMessage(tc.mounts, "/dev/termination-log", tc.fallback)
			if got != tc.want || logs != tc.wantLogs {
				t.Errorf("= %q, %v; want %q, %v", got, logs, tc.want, tc.wantLogs)
			}
		})
	}
}

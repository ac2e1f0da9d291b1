package pods

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// terminalSession is the real kubectl running on a pseudo-terminal (framework.Terminal), as a
// user at a terminal runs it, with the test's helpers around it.
type terminalSession struct {
	t *testing.T
	*framework.Terminal
}

// kubectlOnTTY starts kubectl with args on a new pseudo-terminal. Cleanup kills it if it is
// still running.
func kubectlOnTTY(t *testing.T, args ...string) *terminalSession {
	t.Helper()
	cmd := exec.Command(cluster.Kubectl, append([]string{"--kubeconfig", cluster.AdminKubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	term, err := framework.StartOnTerminal(cmd)
	if err != nil {
		t.Fatalf("start kubectl %v: %v", args, err)
	}
	t.Cleanup(func() { _ = term.Wait(0) })
	return &terminalSession{t: t, Terminal: term}
}

// waitFor waits until the screen, after what was seen before, shows want; it returns the screen.
func (s *terminalSession) waitFor(seen int, want string) string {
	s.t.Helper()
	screen, err := s.WaitFor(seen, want, time.Minute)
	if err != nil {
		s.t.Fatalf("the terminal: %v; it shows %q", err, screen)
	}
	return screen
}

// typeKeys types keys once the screen shows after (after what it showed before), and returns
// the length of the screen then.
func (s *terminalSession) typeKeys(after, keys string) int {
	s.t.Helper()
	seen := len(s.String())
	if after != "" {
		seen = len(s.waitFor(0, after))
	}
	if err := s.Type(keys); err != nil {
		s.t.Fatalf("type %q: %v", keys, err)
	}
	return seen
}

// exitCode waits (a minute at most) for kubectl to exit and returns its exit code.
func (s *terminalSession) exitCode() int {
	s.t.Helper()
	select {
	case <-s.Done():
	case <-time.After(time.Minute):
		s.t.Fatalf("kubectl did not exit; the terminal shows %q", s.String())
	}
	s.t.Logf("kubectl exited (%v); the terminal showed %q", s.Err(), s.String())
	var exitErr *exec.ExitError
	switch {
	case s.Err() == nil:
		return 0
	case errors.As(s.Err(), &exitErr):
		return exitErr.ExitCode()
	}
	s.t.Fatalf("kubectl: %v", s.Err())
	return -1
}

// TestKubectlInteractiveShell pins a terminal session with the real kubectl against the fake runtime,
// as with busybox on containerd: exec -it sh, attach -it, run -it --rm and debug -it give busybox's
// prompt, run what is typed, stop a command on Ctrl-C and end with the shell's exit status.
func TestKubectlInteractiveShell(t *testing.T) {
	n := startNode(t, "e2e-pods-tty")
	ns := namespace(t)
	runningPod(t, ns, "shell", podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"))

	t.Run("exec -it sh", func(t *testing.T) {
		s := kubectlOnTTY(t, "-n", ns, "exec", "-it", "shell", "--", "sh")
		s.typeKeys("/ # ", "echo hi\r")
		s.waitFor(0, "echo hi\r\nhi\r\n/ # ")
		seen := s.typeKeys("", "echo started; sleep 100\r")
		s.waitFor(seen, "started\r\n")
		seen = s.typeKeys("", "\x03") // Ctrl-C
		s.waitFor(seen, "^C\r\n/ # ")
		s.typeKeys("", "exit 3\r")
		if code := s.exitCode(); code != 3 {
			t.Errorf("kubectl exec -it -- sh, then exit 3: kubectl exited %d, want 3; the terminal shows %q", code, s.String())
		}
		if !strings.Contains(s.String(), "command terminated with exit code 3") {
			t.Errorf("kubectl did not say the exit code; the terminal shows %q", s.String())
		}
	})

	t.Run("attach -it", func(t *testing.T) {
		spec := podSpec(n.name, corev1.RestartPolicyNever, "sh")
		spec.Containers[0].Stdin, spec.Containers[0].TTY = true, true
		runningPod(t, ns, "attached", spec)
		s := kubectlOnTTY(t, "-n", ns, "attach", "-it", "attached")
		// The shell printed its prompt before kubectl attached; kubectl's first resize redraws it.
		s.typeKeys("/ # ", "echo attached\r")
		s.waitFor(0, "attached\r\n/ # ")
		s.typeKeys("", "exit 5\r")
		s.exitCode()
		framework.Eventually(t, time.Minute, "the container exited 5", func() (bool, string) {
			pod := getPod(t, ns, "attached")
			st := pod.Status.ContainerStatuses
			return len(st) == 1 && st[0].State.Terminated != nil && st[0].State.Terminated.ExitCode == 5, describe(pod)
		})
	})

	t.Run("run -it --rm", func(t *testing.T) {
		overrides := fmt.Sprintf(`{"apiVersion":"v1","spec":{"nodeSelector":{%q:%q},"automountServiceAccountToken":false}}`, corev1.LabelHostname, n.name)
		s := kubectlOnTTY(t, "-n", ns, "run", "once", "-it", "--rm", "--restart=Never", "--image=busybox:1.36", "--overrides", overrides, "--", "sh")
		s.typeKeys("/ # ", "echo from run\r")
		s.waitFor(0, "from run\r\n/ # ")
		s.typeKeys("", "exit\r")
		if code := s.exitCode(); code != 0 {
			t.Errorf("kubectl run -it --rm: exited %d; the terminal shows %q", code, s.String())
		}
		framework.Eventually(t, time.Minute, "pod once deleted", func() (bool, string) {
			_, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), "once", metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	})

	t.Run("debug -it", func(t *testing.T) {
		s := kubectlOnTTY(t, "-n", ns, "debug", "-it", "shell", "--image=busybox:1.36", "--target=app", "--container=debugger")
		s.typeKeys("/ # ", "hostname\r")
		s.waitFor(0, "shell\r\n/ # ")
		s.typeKeys("", "exit\r")
		if code := s.exitCode(); code != 0 {
			t.Errorf("kubectl debug -it: exited %d; the terminal shows %q", code, s.String())
		}
	})
}

package pods

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// terminalSession is the real kubectl running on a pseudo-terminal, as a user at a terminal runs
// it: kubectl sees a tty, puts it in raw mode and sends each keystroke as it is typed.
type terminalSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	done   chan struct{} // closed when kubectl has exited
	err    error         // kubectl's exit, once done

	mu     sync.Mutex
	screen strings.Builder
}

// openPTY opens a new pseudo-terminal pair of 80x24: the master side (ours) and the terminal
// (kubectl's stdin, stdout and stderr).
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN) // ptsname
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}); err != nil {
		t.Fatalf("set pty size: %v", err)
	}
	return master, tty
}

// kubectlOnTTY starts kubectl with args on a new pseudo-terminal, in its own session with the
// terminal as its controlling tty. Cleanup kills it if it is still running.
func kubectlOnTTY(t *testing.T, args ...string) *terminalSession {
	t.Helper()
	master, tty := openPTY(t)
	cmd := exec.Command(cluster.Kubectl, append([]string{"--kubeconfig", cluster.AdminKubeconfig}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kubectl %v: %v", args, err)
	}
	_ = tty.Close() // kubectl holds it now: its exit ends our reads
	s := &terminalSession{t: t, cmd: cmd, master: master, done: make(chan struct{})}
	go s.readScreen()
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = cmd.Process.Kill()
			<-s.done
		}
		_ = master.Close()
	})
	return s
}

// readScreen records what kubectl shows, until the terminal closes.
func (s *terminalSession) readScreen() {
	buf := make([]byte, 4096)
	for {
		n, err := s.master.Read(buf)
		s.mu.Lock()
		s.screen.Write(buf[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *terminalSession) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// waitFor waits until the screen, after what was seen before, shows want; it returns the screen.
func (s *terminalSession) waitFor(seen int, want string) string {
	s.t.Helper()
	var screen string
	framework.Eventually(s.t, time.Minute, fmt.Sprintf("the terminal shows %q", want), func() (bool, string) {
		screen = s.String()
		return strings.Contains(screen[min(seen, len(screen)):], want), fmt.Sprintf("it shows %q", screen)
	})
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
	if _, err := s.master.WriteString(keys); err != nil {
		s.t.Fatalf("type %q: %v", keys, err)
	}
	return seen
}

// exitCode waits (a minute at most) for kubectl to exit and returns its exit code.
func (s *terminalSession) exitCode() int {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.t.Fatalf("kubectl did not exit; the terminal shows %q", s.String())
	}
	s.t.Logf("kubectl exited (%v); the terminal showed %q", s.err, s.String())
	var exitErr *exec.ExitError
	switch {
	case s.err == nil:
		return 0
	case errors.As(s.err, &exitErr):
		return exitErr.ExitCode()
	}
	s.t.Fatalf("kubectl: %v", s.err)
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

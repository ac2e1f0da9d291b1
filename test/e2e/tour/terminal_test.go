package tour

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// terminal is a command running on a pseudo-terminal of 80x24, in a session of its own with the
// terminal as its controlling tty, as in a reader's terminal window.
type terminal struct {
	cmd    *exec.Cmd
	master *os.File
	done   chan struct{} // closed when the command has exited
	err    error         // its exit, once done

	mu     sync.Mutex
	screen strings.Builder
}

// startOnTerminal starts cmd on a new pseudo-terminal.
func startOnTerminal(cmd *exec.Cmd) (*terminal, error) {
	master, tty, err := openPTY()
	if err != nil {
		return nil, err
	}
	defer tty.Close() // the command holds it now: its exit ends our reads
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		master.Close()
		return nil, err
	}
	term := &terminal{cmd: cmd, master: master, done: make(chan struct{})}
	go term.read()
	go func() {
		term.err = cmd.Wait()
		close(term.done)
	}()
	return term, nil
}

func openPTY() (master, tty *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN) // ptsname
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0) // unlockpt
	}
	if err == nil {
		tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	if err == nil {
		err = unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	}
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	return master, tty, nil
}

func (term *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := term.master.Read(buf)
		term.mu.Lock()
		term.screen.Write(buf[:n])
		term.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (term *terminal) String() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.screen.String()
}

// typeAfter waits (up to timeout) until the screen, after its first seen bytes, shows after;
// then it types keys and returns the screen's length then.
func (term *terminal) typeAfter(seen int, after, keys string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		screen := term.String()
		if i := strings.Index(screen[min(seen, len(screen)):], after); i >= 0 {
			_, err := term.master.WriteString(keys)
			return len(screen), err
		}
		select {
		case <-term.done:
			return 0, fmt.Errorf("it exited (%v) before showing %q", term.err, after)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("it did not show %q within %s", after, timeout)
		}
	}
}

// wait waits up to timeout for the command to exit (else kills it) and closes the terminal.
func (term *terminal) wait(timeout time.Duration) error {
	defer term.master.Close()
	select {
	case <-term.done:
		return term.err
	case <-time.After(timeout):
		_ = syscall.Kill(-term.cmd.Process.Pid, syscall.SIGKILL) // its session, which it leads
		<-term.done
		return fmt.Errorf("it did not exit within %s", timeout)
	}
}

package framework

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

// Terminal is a command running on a pseudo-terminal of 80x24, in a session of its own with the
// terminal as its controlling tty, as in a user's terminal window: kubectl sees a tty, puts it in
// raw mode and sends each keystroke as it is typed.
type Terminal struct {
	cmd    *exec.Cmd
	master *os.File
	done   chan struct{} // closed when the command has exited and what it wrote was read
	err    error         // its exit, once done
	read   chan struct{} // closed when the terminal has nothing more to show

	mu     sync.Mutex
	screen strings.Builder
}

// StartOnTerminal starts cmd on a new pseudo-terminal (its stdin, stdout and stderr).
func StartOnTerminal(cmd *exec.Cmd) (*Terminal, error) {
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
	term := &Terminal{cmd: cmd, master: master, done: make(chan struct{}), read: make(chan struct{})}
	go term.readScreen()
	go func() {
		term.err = cmd.Wait()
		select { // what it wrote just before its exit may still be on its way to us
		case <-term.read:
		case <-time.After(time.Second): // a child of it may hold the terminal open
		}
		close(term.done)
	}()
	return term, nil
}

// openPTY opens a new pseudo-terminal pair of 80x24: the master side (ours) and the terminal.
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

// readScreen records what the command shows, until the terminal closes.
func (term *Terminal) readScreen() {
	defer close(term.read)
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

// String is everything the terminal has shown so far.
func (term *Terminal) String() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.screen.String()
}

// Type types keys.
func (term *Terminal) Type(keys string) error {
	_, err := term.master.WriteString(keys)
	return err
}

// Done is closed when the command has exited and the terminal shows all it wrote.
func (term *Terminal) Done() <-chan struct{} { return term.done }

// Err is the command's exit (nil for status 0); read it only after Done.
func (term *Terminal) Err() error { return term.err }

// WaitFor waits (up to timeout) until the screen, after its first seen bytes, shows want; it
// returns the screen then.
func (term *Terminal) WaitFor(seen int, want string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		screen := term.String()
		if strings.Contains(screen[min(seen, len(screen)):], want) {
			return screen, nil
		}
		select {
		case <-term.done:
			if screen = term.String(); strings.Contains(screen[min(seen, len(screen)):], want) {
				return screen, nil
			}
			return screen, fmt.Errorf("it exited (%v) before showing %q", term.err, want)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return screen, fmt.Errorf("it did not show %q within %s", want, timeout)
		}
	}
}

// Wait waits up to timeout for the command to exit (else kills its session) and closes the
// terminal; it returns the command's exit.
func (term *Terminal) Wait(timeout time.Duration) error {
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

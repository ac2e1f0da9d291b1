package fakeruntime

import (
	"context"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestLineDiscipline pins what a terminal in cooked mode does with each key, as a Linux pty does
// for `cat` and busybox's line editor does at the sh prompt: echo, erase, Enter, Ctrl-C, Ctrl-D.
func TestLineDiscipline(t *testing.T) {
	line := func(s string) input { return input{kind: inputLine, text: s} }
	tests := []struct {
		name       string
		keys       string
		wantScreen string
		wantRead   []input
	}{
		{"typed characters are echoed, Enter ends the line", "echo hi\r", "echo hi\n", []input{line("echo hi")}},
		{"a newline ends the line too", "ls\n", "ls\n", []input{line("ls")}},
		{"an empty line", "\r", "\n", []input{line("")}},
		{"DEL erases the last character", "ecx\x7fho\r", "ecx\b \bho\n", []input{line("echo")}},
		{"Ctrl-H erases too", "ab\x08\r", "ab\b \b\n", []input{line("a")}},
		{"erasing an empty line does nothing", "\x7fa\r", "a\n", []input{line("a")}},
		{"erase takes a whole UTF-8 character", "é\x7f\r", "é\b \b\n", []input{line("")}},
		{"Ctrl-C drops the line and interrupts", "sleep\x03ls\r", "sleep^Cls\n", []input{{kind: inputInterrupt}, line("ls")}},
		{"Ctrl-D on an empty line ends the input", "\x04", "", []input{{kind: inputEOF}}},
		{"Ctrl-D after text does nothing", "ab\x04\r", "ab\n", []input{line("ab")}},
		{"arrow keys are ignored", "a\x1b[A\x1b[Db\x1bOH\r", "ab\n", []input{line("ab")}},
		{"other control keys are ignored", "a\tb\x01\r", "ab\n", []input{line("ab")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			screen, read := typeKeys(tc.keys)
			if screen != tc.wantScreen {
				t.Errorf("screen %q, want %q", screen, tc.wantScreen)
			}
			if !reflect.DeepEqual(read, tc.wantRead) {
				t.Errorf("read %+v, want %+v", read, tc.wantRead)
			}
		})
	}
}

// TestIsInteractiveShell pins which command lines start the interactive shell.
func TestIsInteractiveShell(t *testing.T) {
	for argv, want := range map[string]bool{
		"sh": true, "/bin/sh": true, "bash -l": true, "sh -i": true, "bash --login": true,
		"sh -c": false, "sh -ec": false, "sh script.sh": false, "cat": false, "": false,
	} {
		if got := isInteractiveShell(strings.Fields(argv)); got != want {
			t.Errorf("isInteractiveShell(%q) = %v, want %v", argv, got, want)
		}
	}
}

// TestShellPrompt pins busybox's prompt "\w \$ ".
func TestShellPrompt(t *testing.T) {
	uid := func(n int64) *runtimeapi.LinuxContainerConfig {
		return &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{RunAsUser: &runtimeapi.Int64Value{Value: n}}}
	}
	tests := []struct {
		cfg  *runtimeapi.ContainerConfig
		want string
	}{
		{&runtimeapi.ContainerConfig{}, "/ # "},
		{&runtimeapi.ContainerConfig{WorkingDir: "/tmp"}, "/tmp # "},
		{&runtimeapi.ContainerConfig{WorkingDir: "/root"}, "~ # "},
		{&runtimeapi.ContainerConfig{Linux: uid(0)}, "/ # "},
		{&runtimeapi.ContainerConfig{Linux: uid(1000), WorkingDir: "/home"}, "/home $ "},
	}
	for _, tc := range tests {
		if got := shellPrompt(tc.cfg); got != tc.want {
			t.Errorf("shellPrompt(%v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// screen records what a terminal shows.
type screen struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (s *screen) write(_ runtimeapi.LogStreamType, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.WriteString(text)
	return nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Write makes a screen the stdout of a streaming client.
func (s *screen) Write(p []byte) (int, error) {
	_ = s.write(runtimeapi.Stdout, string(p))
	return len(p), nil
}

// waitSuffix waits until the screen ends with want.
func (s *screen) waitSuffix(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return strings.HasSuffix(s.String(), want), nil
	})
	if err != nil {
		t.Fatalf("the screen never ended with %q; it shows %q", want, s.String())
	}
}

// keystroke is what the user types once the screen ends with after.
type keystroke struct {
	after string
	keys  string
}

// TestInteractiveShell pins the shell busybox runs on a tty: a prompt, each line run as typed,
// Ctrl-C interrupting a command or the line, Ctrl-D and exit ending it with their status.
func TestInteractiveShell(t *testing.T) {
	tests := []struct {
		name       string
		typed      []keystroke
		wantScreen string
		wantCode   int32
	}{
		{
			name:       "echo then exit N",
			typed:      []keystroke{{"/ # ", "echo hi\r"}, {"hi\n/ # ", "exit 3\r"}},
			wantScreen: "/ # echo hi\nhi\n/ # exit 3\n",
			wantCode:   3,
		},
		{
			name:       "Ctrl-D exits with the last status",
			typed:      []keystroke{{"/ # ", "false\r"}, {"false\n/ # ", "\x04"}},
			wantScreen: "/ # false\n/ # \n",
			wantCode:   1,
		},
		{
			name:       "Ctrl-C interrupts sleep and sets $? to 130",
			typed:      []keystroke{{"/ # ", "sleep 100\r"}, {"sleep 100\n", "\x03"}, {"^C\n/ # ", "exit\r"}},
			wantScreen: "/ # sleep 100\n^C\n/ # exit\n",
			wantCode:   130,
		},
		{
			name:       "Ctrl-C at the prompt drops the line",
			typed:      []keystroke{{"/ # ", "echo no\x03"}, {"^C\n/ # ", "exit 0\r"}},
			wantScreen: "/ # echo no^C\n/ # exit 0\n",
		},
		{
			name:       "cat prints each line back until Ctrl-D",
			typed:      []keystroke{{"/ # ", "cat\r"}, {"cat\n", "one\r"}, {"one\none\n", "\x04"}, {"/ # ", "exit\r"}},
			wantScreen: "/ # cat\none\none\n/ # exit\n",
		},
		{
			name:       "Ctrl-C ends cat",
			typed:      []keystroke{{"/ # ", "cat\r"}, {"cat\n", "\x03"}, {"^C\n/ # ", "\x04"}},
			wantScreen: "/ # cat\n^C\n/ # \n",
			wantCode:   130,
		},
		{
			name:       "unknown commands are not found; syntax errors do not end the shell",
			typed:      []keystroke{{"/ # ", "vi\r"}, {"not found\n/ # ", "echo a |\r"}, {"/ # ", "exit\r"}},
			wantScreen: "/ # vi\nsh: vi: not found\n/ # echo a |\nsh: syntax error: unexpected end of file\n/ # exit\n",
			wantCode:   2,
		},
		{
			name:       "backspace edits the line before it runs",
			typed:      []keystroke{{"/ # ", "echo hix\x7f\r"}, {"hi\n/ # ", "exit\r"}},
			wantScreen: "/ # echo hix\b \b\nhi\n/ # exit\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newStreamEnv(t)
			var scr screen
			term := newTerminal(&lockedSink{out: &scr}, false)
			c, v, err := e.rt.execTarget(e.containerID)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				code int32
				err  error
			}
			done := make(chan result, 1)
			go func() {
				code, err := e.rt.interact(e.ctx, v, term, "/ # ", c.exited)
				done <- result{code, err}
			}()
			for _, k := range tc.typed {
				scr.waitSuffix(t, e.ctx, k.after)
				// Ctrl-C drops lines not read yet, as a tty flushes its input: type once the
				// shell has read what was typed before.
				poll(t, e.ctx, term.allRead)
				if err := term.feed([]byte(k.keys)); err != nil {
					t.Fatal(err)
				}
			}
			var got result
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the shell did not end; the screen shows %q", scr.String())
			}
			if got.err != nil || got.code != tc.wantCode {
				t.Errorf("shell ended with %d, %v; want %d", got.code, got.err, tc.wantCode)
			}
			if s := scr.String(); s != tc.wantScreen {
				t.Errorf("screen %q, want %q", s, tc.wantScreen)
			}
		})
	}
}

// allRead says whether the program has read every line typed.
func (t *terminal) allRead() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.queue) == 0
}

// sizes is a remotecommand.TerminalSizeQueue with one size, as kubectl sends when it starts.
type sizes struct {
	sent chan remotecommand.TerminalSize
}

func newSizes(width, height uint16) *sizes {
	s := &sizes{sent: make(chan remotecommand.TerminalSize, 1)}
	s.sent <- remotecommand.TerminalSize{Width: width, Height: height}
	return s
}

func (s *sizes) Next() *remotecommand.TerminalSize {
	size, ok := <-s.sent
	if !ok {
		return nil
	}
	return &size
}

// TestExecInteractiveShell pins `kubectl exec -it pod -- sh` over the streaming server: the prompt,
// output in CRLF, and the exit status of `exit 3` reaching the client as its exit code.
func TestExecInteractiveShell(t *testing.T) {
	e := newStreamEnv(t)
	url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: []string{"sh"}, Stdin: true, Stdout: true, Tty: true})
	stdin, typing := io.Pipe()
	defer func() { _ = typing.Close() }()
	var scr screen
	done := make(chan error, 1)
	go func() {
		done <- spdyExecutor(t, url).StreamWithContext(e.ctx, remotecommand.StreamOptions{
			Stdin: stdin, Stdout: &scr, Tty: true, TerminalSizeQueue: newSizes(80, 24),
		})
	}()
	scr.waitSuffix(t, e.ctx, "/ # ")
	if _, err := typing.Write([]byte("cat /etc/config/key\r")); err != nil {
		t.Fatal(err)
	}
	scr.waitSuffix(t, e.ctx, "value\r\n/ # ")
	if _, err := typing.Write([]byte("exit 3\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := exitStatus(err); code != 3 {
			t.Errorf("client got %v (exit code %d), want exit code 3", err, code)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end; the screen shows %q", scr.String())
	}
	if want := "/ # cat /etc/config/key\r\nvalue\r\n/ # exit 3\r\n"; scr.String() != want {
		t.Errorf("screen %q, want %q", scr.String(), want)
	}
}

// TestExecTTYInterrupt pins Ctrl-C on `kubectl exec -it pod -- cat`: the command ends with exit
// code 130 (SIGINT), after echoing and printing back a line.
func TestExecTTYInterrupt(t *testing.T) {
	e := newStreamEnv(t)
	url := e.execURL(t, &runtimeapi.ExecRequest{Cmd: []string{"cat"}, Stdin: true, Stdout: true, Tty: true})
	stdin, typing := io.Pipe()
	defer func() { _ = typing.Close() }()
	var scr screen
	done := make(chan error, 1)
	go func() {
		done <- spdyExecutor(t, url).StreamWithContext(e.ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &scr, Tty: true})
	}()
	if _, err := typing.Write([]byte("hello\r")); err != nil {
		t.Fatal(err)
	}
	scr.waitSuffix(t, e.ctx, "hello\r\nhello\r\n")
	if _, err := typing.Write([]byte{keyInterrupt}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := exitStatus(err); code != 130 {
			t.Errorf("client got %v (exit code %d), want exit code 130", err, code)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end; the screen shows %q", scr.String())
	}
}

// TestAttachInteractiveShell pins `kubectl run -it --image=busybox -- sh`: a container with stdin
// and a tty runs the shell, attach -it shows the prompt (kubectl's first resize redraws it), what
// the client types runs, and `exit 4` ends the container with exit code 4.
func TestAttachInteractiveShell(t *testing.T) {
	e := newStreamEnv(t)
	cfg := containerConfig("shell")
	cfg.Args = []string{"sh"}
	cfg.Stdin, cfg.StdinOnce, cfg.Tty = true, true, true
	id := e.createContainer(t, e.sandboxID, cfg)
	e.startContainer(t, id)
	resp, err := e.rs.Attach(e.ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true, Tty: true})
	if err != nil {
		t.Fatalf("Attach: %v", err)
	}
	stdin, typing := io.Pipe()
	defer func() { _ = typing.Close() }()
	var scr screen
	done := make(chan error, 1)
	go func() {
		done <- spdyExecutor(t, resp.GetUrl()).StreamWithContext(e.ctx, remotecommand.StreamOptions{
			Stdin: stdin, Stdout: &scr, Tty: true, TerminalSizeQueue: newSizes(80, 24),
		})
	}()
	scr.waitSuffix(t, e.ctx, "\r/ # \x1b[K")
	if _, err := typing.Write([]byte("echo hi\r")); err != nil {
		t.Fatal(err)
	}
	scr.waitSuffix(t, e.ctx, "echo hi\r\nhi\r\n/ # ")
	if _, err := typing.Write([]byte("exit 4\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("attach ended with %v, want nil when the container exits", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end; the screen shows %q", scr.String())
	}
	if st := e.waitExited(t, id); st.GetExitCode() != 4 {
		t.Errorf("container exit code %d, want 4", st.GetExitCode())
	}
}

// TestShellContainerStopped pins that stopping a container ends its waiting shell (and Serve does
// not wait for it forever).
func TestShellContainerStopped(t *testing.T) {
	e := newStreamEnv(t)
	cfg := containerConfig("shell")
	cfg.Stdin, cfg.Tty = true, true // no command: the image's default, sh
	id := e.createContainer(t, e.sandboxID, cfg)
	e.startContainer(t, id)
	if _, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0}); err != nil {
		t.Fatal(err)
	}
	if st := e.waitExited(t, id); st.GetExitCode() != exitCodeSIGKILL {
		t.Errorf("exit code %d, want %d", st.GetExitCode(), exitCodeSIGKILL)
	}
}

// typeKeys runs keys through a fresh line discipline: what the screen shows and what the program
// reads. Tests use it as a table of keystrokes.
func typeKeys(keys string) (screen string, read []input) {
	var l lineDiscipline
	for i := 0; i < len(keys); i++ {
		echo, in := l.key(keys[i])
		screen += echo
		if in.kind != inputNone {
			read = append(read, in)
		}
	}
	return screen, read
}

package fakeruntime

import (
	"sync"
	"unicode/utf8"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A terminal for exec -it and attach -it (doc.go, "Terminals"). kubectl puts the user's terminal
// in raw mode and sends every keystroke as it is typed, so the runtime side plays the tty: it
// echoes, edits the line being typed, and turns Enter, Ctrl-C and Ctrl-D into a line, an
// interrupt and an end of input. lineDiscipline is that decision, one key at a time; terminal
// feeds it and hands what it completes to the program (the interactive shell, cat, a sleep that
// Ctrl-C ends).

// Keys the line discipline acts on (termios' VINTR, VEOF, VERASE; ICRNL turns Enter's \r into \n).
const (
	keyInterrupt = 0x03 // Ctrl-C
	keyEOF       = 0x04 // Ctrl-D
	keyBackspace = 0x08 // Ctrl-H
	keyEscape    = 0x1b // starts an escape sequence: arrow keys, Home, F1…
	keyDelete    = 0x7f // Backspace on most keyboards
)

// inputKind is what a key completes.
type inputKind int

const (
	inputNone      inputKind = iota // the line is still being typed
	inputLine                       // Enter: a line, without its newline
	inputInterrupt                  // Ctrl-C: the line typed so far is dropped
	inputEOF                        // Ctrl-D on an empty line (or the client closed stdin)
)

// input is one thing a program reads from its terminal.
type input struct {
	kind inputKind
	text string // inputLine
}

// lineDiscipline is a terminal's cooked mode: the line being typed and what each key does to it.
type lineDiscipline struct {
	line   []byte
	escape int // bytes of an escape sequence read so far (0: none)
}

// key handles one typed byte: it returns what the terminal echoes, with "\n" for a new line (the
// output side turns it into "\r\n"), and what the key completes. Keys a busybox sh prompt would
// use for editing or history (Tab, arrows, Ctrl-A…) are ignored, so the screen and the line
// never disagree.
func (l *lineDiscipline) key(b byte) (echo string, in input) {
	if l.escape > 0 {
		l.escape++
		// ESC [ … final byte, or ESC O x (SS3), or ESC x: a final byte is 0x40–0x7e after the
		// introducer.
		if l.escape == 2 && (b == '[' || b == 'O') {
			return "", input{}
		}
		if b >= 0x40 && b <= 0x7e {
			l.escape = 0
		}
		return "", input{}
	}
	switch b {
	case '\r', '\n':
		text := string(l.line)
		l.line = l.line[:0]
		return "\n", input{kind: inputLine, text: text}
	case keyInterrupt:
		l.line = l.line[:0]
		return "^C", input{kind: inputInterrupt}
	case keyEOF:
		if len(l.line) == 0 {
			return "", input{kind: inputEOF}
		}
		return "", input{} // busybox deletes the character under the cursor: at the end, none
	case keyDelete, keyBackspace:
		if len(l.line) == 0 {
			return "", input{}
		}
		_, size := utf8.DecodeLastRune(l.line)
		l.line = l.line[:len(l.line)-size]
		return "\b \b", input{}
	case keyEscape:
		l.escape = 1
		return "", input{}
	}
	if b < 0x20 {
		return "", input{} // other control keys
	}
	l.line = append(l.line, b)
	return string([]byte{b}), input{}
}

// terminal is the tty of an exec session or of a container started with stdin and tty (or, plain,
// the stdin of `kubectl exec -i pod -- sh`, which reads commands from it). Keys
// arrive through feed (a session's stdin), are echoed at once to out and queued as inputs until
// the program reads them; Ctrl-C also drops the queue and raises an interrupt. Safe for
// concurrent use: feed runs on the goroutine that reads the client, the program on another.
type terminal struct {
	out sink // a lockedSink: echoes and the program's output share it

	mu         sync.Mutex
	ld         lineDiscipline
	plain      bool    // no tty (exec -i pod -- sh): lines end at "\n", no echo, no editing, no Ctrl-C
	queue      []input // lines and EOFs typed ahead of the program
	closed     bool    // the input has ended: every read is an EOF from now on
	prompt     string  // the prompt the shell waits at, "" while a command runs
	width      uint16
	height     uint16
	sized      bool          // a size is known: a change of it redraws the prompt
	queued     chan struct{} // capacity 1: the queue may have something
	interrupts chan struct{} // capacity 1: Ctrl-C was typed
}

// newTerminal makes a terminal echoing to out, which the program writes to as well. sized says whether it has a size already (a
// container's tty starts as 0x0, so kubectl attach's first resize is a change); an exec's
// terminal takes its first size from the client, like a process started on a console of that size.
func newTerminal(out *lockedSink, sized bool) *terminal {
	return &terminal{out: out, sized: sized, queued: make(chan struct{}, 1), interrupts: make(chan struct{}, 1)}
}

// feed handles keys typed by the client. An error means the output has gone.
func (t *terminal) feed(keys []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, b := range keys {
		var echo string
		var in input
		if t.plain {
			in = t.plainKey(b)
		} else {
			echo, in = t.ld.key(b)
		}
		if echo != "" {
			if err := t.out.write(runtimeapi.Stdout, echo); err != nil {
				return err
			}
		}
		switch in.kind {
		case inputInterrupt:
			t.queue = nil // a tty flushes its input on VINTR
			signal(t.interrupts)
		case inputLine, inputEOF:
			t.prompt = ""
			t.queue = append(t.queue, in)
			signal(t.queued)
		}
	}
	return nil
}

// plainKey is a byte of input without a tty: lines end at "\n", nothing is echoed or edited.
func (t *terminal) plainKey(b byte) input {
	if b != '\n' {
		t.ld.line = append(t.ld.line, b)
		return input{}
	}
	text := string(t.ld.line)
	t.ld.line = t.ld.line[:0]
	return input{kind: inputLine, text: text}
}

// closeInput ends the input: the client closed stdin (or, with StdinOnce, detached). Without a
// tty, a last line with no "\n" is read too.
func (t *terminal) closeInput() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.plain && len(t.ld.line) > 0 {
		t.queue = append(t.queue, input{kind: inputLine, text: string(t.ld.line)})
		t.ld.line = nil
	}
	t.closed = true
	signal(t.queued)
}

// resize records the client's terminal size. A change while the shell waits at its prompt
// redraws the prompt and the line being typed, as busybox does on SIGWINCH: that is how the
// prompt appears when kubectl attach connects after the shell printed it.
func (t *terminal) resize(width, height uint16) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := t.sized && (width != t.width || height != t.height)
	t.width, t.height, t.sized = width, height, true
	if !changed || t.prompt == "" {
		return nil
	}
	return t.out.write(runtimeapi.Stdout, "\r"+t.prompt+string(t.ld.line)+"\x1b[K")
}

// showPrompt writes the shell's prompt; until a line is read, a resize redraws it.
func (t *terminal) showPrompt(prompt string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prompt = prompt
	return t.out.write(runtimeapi.Stdout, prompt)
}

// next takes the oldest queued input; false if there is none yet.
func (t *terminal) next() (input, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue) == 0 {
		if t.closed {
			return input{kind: inputEOF}, true
		}
		return input{}, false
	}
	in := t.queue[0]
	t.queue = t.queue[1:]
	return in, true
}

// signal wakes whoever waits on ch (capacity 1) without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// lockedSink serialises writes to a sink written from two goroutines (echo and program output).
type lockedSink struct {
	mu  sync.Mutex
	out sink
}

func (s *lockedSink) write(stream runtimeapi.LogStreamType, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.write(stream, text)
}

package fakeruntime

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The shell part of the program grammar: how `sh -c SCRIPT` is cut into simple commands, with
// the lists (";", "&&", "||", "&"), pipes ("|"), quotes and output redirections that Kubernetes
// examples use. Control flow and expansions are compile.go's and expand.go's.

// runIf says when a command runs, given the exit status of the command before it ($?).
type runIf int

const (
	always      runIf = iota // first, or after ";", "&" or a newline
	ifSucceeded              // after "&&": only if $? is 0
	ifFailed                 // after "||": only if $? is not 0
	ifPiped                  // after "|": if the command before it ran (process.skipped)
)

func (c runIf) holds(status int32) bool {
	switch c {
	case ifSucceeded:
		return status == 0
	case ifFailed:
		return status != 0
	}
	return true
}

// redirect is one output redirection of a command: "> F", ">> F", "2> F", ">&2", "2>&1".
type redirect struct {
	fd       int    // the descriptor redirected: 1 (stdout) or 2 (stderr)
	file     string // the file inside the container ("" for a copy of a descriptor)
	to       int    // with file "": the descriptor copied, 1 or 2
	appendTo bool   // >>: append instead of truncating
}

func (r redirect) String() string {
	fd := ""
	if r.fd != 1 {
		fd = strconv.Itoa(r.fd)
	}
	switch {
	case r.file == "":
		return fmt.Sprintf("%s>&%d", fd, r.to)
	case r.appendTo:
		return fd + ">>" + r.file
	}
	return fd + ">" + r.file
}

// command is one simple command of a script: its words, its redirections and how it joins the
// command before it.
type command struct {
	words  []string
	redirs []redirect
	cond   runIf
	bg     bool // ended by "&": the shell does not wait for it
	pipe   bool // ended by "|": its stdout is the next command's stdin
}

// shellNames are the commands read as a shell.
var shellNames = []string{"sh", "bash", "ash", "dash", "zsh"}

// shellScript returns SCRIPT if argv is `sh -c SCRIPT …` (also bash, /bin/sh, and flags that
// include c, like -ec). Arguments after SCRIPT ($0, $1, …) are ignored.
func shellScript(argv []string) (string, bool) {
	if len(argv) < 3 || !slices.Contains(shellNames, path.Base(argv[0])) {
		return "", false
	}
	flags := argv[1]
	if len(flags) < 2 || flags[0] != '-' || !strings.Contains(flags, "c") || strings.Trim(flags[1:], "abcefhilmnuvx") != "" {
		return "", false
	}
	return argv[2], true
}

// scanner cuts a script into commands; parseScript drives it one character at a time.
type scanner struct {
	runes   []rune // the script
	i       int    // the index of the character being read
	quote   rune   // the open quote, ' or ", or 0
	cmds    []command
	cur     command
	word    strings.Builder
	inWord  bool
	quoted  bool      // the current word had quotes or escapes: "2" is then no descriptor
	pending *redirect // a redirection waiting for its target word
	both    bool      // pending came from "&>": stderr follows stdout
	err     error     // a syntax error found inside a word (an unclosed "$(")
}

// parseScript cuts a script into simple commands. Its error reads as sh's would. Each character
// is read inside quotes (scanQuoted), as a word or comment (scanWord) or as an operator
// (scanOperator); then the script must end cleanly (finish).
func parseScript(script string) ([]command, error) {
	s := &scanner{runes: []rune(script)}
	for ; s.i < len(s.runes); s.i++ {
		c := s.runes[s.i]
		var err error
		switch {
		case s.quote != 0:
			s.scanQuoted(c)
		case !s.scanWord(c):
			err = s.scanOperator(c)
		}
		if err == nil {
			err = s.err
		}
		if err != nil {
			return nil, err
		}
	}
	return s.finish()
}

// peek is the character after the current one, or 0 at the end.
func (s *scanner) peek() rune {
	if s.i+1 < len(s.runes) {
		return s.runes[s.i+1]
	}
	return 0
}

// scanQuoted reads c inside quotes: the closing quote, an escape inside "…", or a character of
// the word.
func (s *scanner) scanQuoted(c rune) {
	switch {
	case c == s.quote:
		s.quote = 0
	case s.quote == '"' && (c == '$' || c == '`'):
		s.dollar(c, markQuoted)
	case s.quote == '"' && c == '\\' && strings.ContainsRune("\"\\$`\n", s.peek()):
		s.i++
		if s.runes[s.i] != '\n' {
			s.word.WriteRune(s.runes[s.i])
		}
	default:
		s.word.WriteRune(c)
	}
}

// scanWord reads c outside quotes if it is part of a word or a comment — a quote that opens, a
// backslash escape, a "#" that starts a comment, any character that is neither a blank nor an
// operator — and says whether it did.
func (s *scanner) scanWord(c rune) bool {
	switch {
	case c == '\'' || c == '"':
		s.quote, s.inWord, s.quoted = c, true, true
	case c == '$' || c == '`':
		s.dollar(c, markUnquoted)
	case c == '\\':
		if s.i++; s.i < len(s.runes) && s.runes[s.i] != '\n' {
			s.word.WriteRune(s.runes[s.i])
			s.inWord, s.quoted = true, true
		}
	case c == '#' && !s.inWord: // a comment, to the end of the line
		for s.i+1 < len(s.runes) && s.runes[s.i+1] != '\n' {
			s.i++
		}
	case strings.ContainsRune(" \t\n;&|<>", c):
		return false
	default:
		s.word.WriteRune(c)
		s.inWord = true
	}
	return true
}

// scanOperator reads c, a blank or an operator outside quotes: it ends a word (blank), a command
// (";", newline, "&&", "||", "&") or starts a redirection (">", ">>", "&>", "2>", ">&2", …).
func (s *scanner) scanOperator(c rune) error {
	switch {
	case c == ' ' || c == '\t':
		return s.endWord()
	case c == '\n' || c == ';':
		return s.endCommand(";", always, false)
	case c == '&' && s.peek() == '&':
		s.i++
		return s.endCommand("&&", ifSucceeded, false)
	case c == '&' && s.peek() == '>': // &> F: stdout and stderr to F
		s.i++
		if err := s.endWord(); err != nil {
			return err
		}
		err := s.redirect(redirect{fd: 1})
		s.both = true
		return err
	case c == '&':
		return s.endCommand("&", always, true)
	case c == '|' && s.peek() == '|':
		s.i++
		return s.endCommand("||", ifFailed, false)
	case c == '|':
		if err := s.endCommand("|", always, false); err != nil {
			return err
		}
		s.cmds[len(s.cmds)-1].pipe = true
		s.cur.cond = ifPiped
		return nil
	case c == '<':
		return errors.New("sh: the fake runtime's shell has no input redirection (<): give the file as an argument")
	}
	// c == '>'
	r := redirect{fd: 1}
	if w := s.word.String(); s.inWord && !s.quoted && (w == "1" || w == "2") {
		r.fd = int(w[0] - '0')
		s.word.Reset()
		s.inWord = false
	} else if err := s.endWord(); err != nil {
		return err
	}
	return s.redirect(r)
}

// finish ends the last command: no quote may be open, no "&&" or "||" may wait for a command.
func (s *scanner) finish() ([]command, error) {
	if s.quote != 0 {
		return nil, errors.New("sh: syntax error: unterminated quoted string")
	}
	if err := s.endCommand("", always, false); err != nil {
		return nil, err
	}
	if s.cur.cond != always {
		return nil, errors.New("sh: syntax error: unexpected end of file")
	}
	return s.cmds, nil
}

// redirect starts redirection r at the ">" being read; after it, ">>" appends and ">&N" copies
// descriptor N. The target is the next word.
func (s *scanner) redirect(r redirect) error {
	if s.pending != nil {
		return errors.New("sh: syntax error: unexpected redirection")
	}
	switch s.peek() {
	case '>':
		r.appendTo = true
		s.i++
	case '&':
		r.to = -1 // the next word names the descriptor
		s.i++
	}
	s.pending = &r
	return nil
}

// endWord ends the current word: a word of the command, or the target of a redirection.
func (s *scanner) endWord() error {
	if !s.inWord {
		return nil
	}
	w := s.word.String()
	s.word.Reset()
	s.inWord, s.quoted = false, false
	r := s.pending
	switch {
	case r == nil:
		s.cur.words = append(s.cur.words, w)
		return nil
	case r.to < 0: // >&N
		if w != "1" && w != "2" {
			return fmt.Errorf("sh: %s: bad file descriptor: only 1 and 2 can be redirected", w)
		}
		r.to = int(w[0] - '0')
	default:
		r.file = w
	}
	s.cur.redirs = append(s.cur.redirs, *r)
	if s.both {
		s.cur.redirs = append(s.cur.redirs, redirect{fd: 2, to: 1})
	}
	s.pending, s.both = nil, false
	return nil
}

// endCommand ends the current command at operator op; the next one runs under cond.
func (s *scanner) endCommand(op string, cond runIf, bg bool) error {
	if err := s.endWord(); err != nil {
		return err
	}
	if s.pending != nil {
		return fmt.Errorf("sh: syntax error: a redirection without a file before %q", op)
	}
	if len(s.cur.words) == 0 && len(s.cur.redirs) == 0 {
		if op == ";" || op == "" {
			return nil // blank lines and trailing ";" are fine; a pending "&&" waits for its command
		}
		return fmt.Errorf("sh: syntax error: unexpected %q", op)
	}
	s.cur.bg = bg
	s.cmds = append(s.cmds, s.cur)
	s.cur = command{cond: cond}
	return nil
}

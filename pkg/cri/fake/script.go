package fake

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The shell part of the program grammar: how `sh -c SCRIPT` is cut into simple commands, with
// the lists (";", "&&", "||", "&"), quotes and output redirections that Kubernetes examples use.
// There are no pipes, no variables, no control flow (if, while: their words are commands the
// grammar does not know).

// runIf says when a command runs, given the exit status of the command before it ($?).
type runIf int

const (
	always      runIf = iota // first, or after ";", "&" or a newline
	ifSucceeded              // after "&&": only if $? is 0
	ifFailed                 // after "||": only if $? is not 0
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
}

// shellScript returns SCRIPT if argv is `sh -c SCRIPT …` (also bash, /bin/sh, and flags that
// include c, like -ec). Arguments after SCRIPT ($0, $1, …) are ignored.
func shellScript(argv []string) (string, bool) {
	shells := []string{"sh", "bash", "ash", "dash", "zsh"}
	if len(argv) < 3 || !slices.Contains(shells, path.Base(argv[0])) {
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
	cmds    []command
	cur     command
	word    strings.Builder
	inWord  bool
	quoted  bool      // the current word had quotes or escapes: "2" is then no descriptor
	pending *redirect // a redirection waiting for its target word
	both    bool      // pending came from "&>": stderr follows stdout
}

// parseScript cuts a script into simple commands. Its error reads as sh's would.
func parseScript(script string) ([]command, error) {
	s := &scanner{}
	runes := []rune(script)
	next := func(i int) rune {
		if i+1 < len(runes) {
			return runes[i+1]
		}
		return 0
	}
	var quote rune
	for i := 0; i < len(runes); i++ {
		c := runes[i]
		var err error
		switch {
		case quote == '\'' && c == '\'', quote == '"' && c == '"':
			quote = 0
		case quote == '"' && c == '\\' && strings.ContainsRune("\"\\$`\n", next(i)):
			i++
			if runes[i] != '\n' {
				s.word.WriteRune(runes[i])
			}
		case quote != 0:
			s.word.WriteRune(c)
		case c == '\'' || c == '"':
			quote, s.inWord, s.quoted = c, true, true
		case c == '\\':
			if i++; i < len(runes) && runes[i] != '\n' {
				s.word.WriteRune(runes[i])
				s.inWord, s.quoted = true, true
			}
		case c == ' ' || c == '\t':
			err = s.endWord()
		case c == '#' && !s.inWord: // a comment, to the end of the line
			for i+1 < len(runes) && runes[i+1] != '\n' {
				i++
			}
		case c == '\n' || c == ';':
			err = s.endCommand(";", always, false)
		case c == '&' && next(i) == '&':
			i++
			err = s.endCommand("&&", ifSucceeded, false)
		case c == '&' && next(i) == '>': // &> F: stdout and stderr to F
			i++
			if err = s.endWord(); err == nil {
				err = s.redirect(redirect{fd: 1}, next(i), &i)
				s.both = true
			}
		case c == '&':
			err = s.endCommand("&", always, true)
		case c == '|' && next(i) == '|':
			i++
			err = s.endCommand("||", ifFailed, false)
		case c == '|':
			err = errors.New("sh: the fake runtime's shell has no pipes (|): run the commands one by one")
		case c == '<':
			err = errors.New("sh: the fake runtime's shell has no input redirection (<): give the file as an argument")
		case c == '>':
			r := redirect{fd: 1}
			if w := s.word.String(); s.inWord && !s.quoted && (w == "1" || w == "2") {
				r.fd = int(w[0] - '0')
				s.word.Reset()
				s.inWord = false
			} else if err = s.endWord(); err != nil {
				break
			}
			err = s.redirect(r, next(i), &i)
		default:
			s.word.WriteRune(c)
			s.inWord = true
		}
		if err != nil {
			return nil, err
		}
	}
	if quote != 0 {
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

// redirect starts redirection r at the ">" at *i; after it comes next: ">>" appends, ">&N"
// copies descriptor N. The target is the next word.
func (s *scanner) redirect(r redirect, next rune, i *int) error {
	if s.pending != nil {
		return errors.New("sh: syntax error: unexpected redirection")
	}
	switch next {
	case '>':
		r.appendTo = true
		*i++
	case '&':
		r.to = -1 // the next word names the descriptor
		*i++
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

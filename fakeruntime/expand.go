package fakeruntime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Parameter expansion, arithmetic expansion and command substitution: "$VAR", "${VAR}", "$?",
// "$((i+1))", "$(date)" and `date`. The scanner (script.go) keeps each expansion in its word,
// raw, behind a marker that says whether it was quoted; the interpreter expands the words of a
// command just before it runs (expandWords), as the shell does.

const (
	markUnquoted = '\x00' // an expansion outside quotes: its value is split into fields
	markQuoted   = '\x01' // an expansion inside "…": its value stays one field
)

// hasExpansion says whether a word has an expansion to make at run time.
func hasExpansion(w string) bool { return strings.ContainsAny(w, "\x00\x01") }

// showWord is a word as the script wrote it, markers removed (for ContainerStatus --verbose).
func showWord(w string) string { return strings.NewReplacer("\x00", "", "\x01", "").Replace(w) }

func isNameStart(c rune) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isNameChar(c rune) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }

// dollar reads a "$" (or a backquote) at s.i: an expansion is kept in the word behind mark, a
// "$" that starts none is a character. "$(…)" and "${…}" are kept whole, to their closing
// bracket; `cmd` becomes "$(cmd)".
func (s *scanner) dollar(c rune, mark rune) {
	s.inWord = true
	if c == '`' {
		end := s.i + 1
		for end < len(s.runes) && s.runes[end] != '`' {
			end++
		}
		if end == len(s.runes) {
			s.err = errors.New("sh: syntax error: unterminated `")
			return
		}
		s.word.WriteString(string(mark) + "$(" + string(s.runes[s.i+1:end]) + ")")
		s.i = end
		return
	}
	next := s.peek()
	switch {
	case next == '(' || next == '{':
		end := closing(s.runes, s.i+1)
		if end < 0 {
			s.err = fmt.Errorf("sh: syntax error: missing %q", map[rune]string{'(': ")", '{': "}"}[next])
			return
		}
		s.word.WriteString(string(mark) + string(s.runes[s.i:end+1]))
		s.i = end
	case isNameChar(next) || strings.ContainsRune("?$#", next):
		s.word.WriteString(string(mark) + "$")
	default:
		s.word.WriteRune('$')
	}
}

// closing is the index of the bracket that closes the one at runes[open], skipping quoted text;
// -1 if none does.
func closing(runes []rune, open int) int {
	pair := map[rune]rune{'(': ')', '{': '}'}
	var stack []rune
	var quote rune
	for i := open; i < len(runes); i++ {
		c := runes[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '{':
			stack = append(stack, pair[c])
		case len(stack) > 0 && c == stack[len(stack)-1]:
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return i
			}
		}
	}
	return -1
}

// expander expands the words of one command; stderr receives what command substitutions print
// there.
type expander struct {
	p      *process
	v      view
	stderr sink
}

// lookup is a variable's value: the shell's variables, then the container's environment.
func (e expander) lookup(name string) string {
	switch name {
	case "?":
		return strconv.Itoa(int(e.p.status))
	case "$":
		return "1"
	case "#":
		return "0"
	}
	if val, ok := e.p.vars[name]; ok {
		return val
	}
	for _, kv := range e.v.env {
		if kv.GetKey() == name {
			return string(kv.GetValue())
		}
	}
	return ""
}

// words expands a command's words into fields: an unquoted expansion's value is split at blanks
// (and is no field at all when empty), a quoted one's is not.
func (e expander) words(words []string) ([]string, error) {
	var fields []string
	for _, w := range words {
		f, err := e.word(w, true)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f...)
	}
	return fields, nil
}

// word expands one word; without split, the fields are joined into one (an assignment's value).
func (e expander) word(w string, split bool) ([]string, error) {
	if w == "" {
		return []string{""}, nil // '' or "": one empty field
	}
	var f fieldSplitter
	runes := []rune(w)
	for i := 0; i < len(runes); i++ {
		c := runes[i]
		if c != markUnquoted && c != markQuoted {
			f.literal(string(c))
			continue
		}
		val, end, err := e.expansion(runes, i+1)
		if err != nil {
			return nil, err
		}
		i = end
		if c == markQuoted || !split {
			f.literal(val)
		} else {
			f.split(val)
		}
	}
	f.end()
	if !split {
		return []string{strings.Join(f.fields, " ")}, nil
	}
	return f.fields, nil
}

// fieldSplitter builds the fields of one word.
type fieldSplitter struct {
	fields    []string
	cur       strings.Builder
	has       bool // cur is a field, even if empty ("$EMPTY" quoted)
	breakNext bool // the last expansion ended in blanks: what follows starts a new field
}

func (f *fieldSplitter) push() {
	if f.has {
		f.fields = append(f.fields, f.cur.String())
	}
	f.cur.Reset()
	f.has, f.breakNext = false, false
}

func (f *fieldSplitter) literal(s string) {
	if f.breakNext {
		f.push()
	}
	f.cur.WriteString(s)
	f.has = true
}

// split adds an unquoted expansion's value, cut at blanks.
func (f *fieldSplitter) split(val string) {
	const blanks = " \t\n"
	parts := strings.Fields(val)
	if len(parts) > 0 && strings.ContainsRune(blanks, rune(val[0])) {
		f.push()
	}
	for j, part := range parts {
		if j > 0 {
			f.push()
		}
		f.cur.WriteString(part)
		f.has = true
	}
	if val != "" && strings.ContainsRune(blanks, rune(val[len(val)-1])) {
		f.breakNext = f.has
	}
}

func (f *fieldSplitter) end() { f.push() }

// expansion expands the one that starts with "$" at runes[i] and returns its value and the index
// of its last character.
func (e expander) expansion(runes []rune, i int) (string, int, error) {
	if i+1 >= len(runes) {
		return "$", i, nil
	}
	switch c := runes[i+1]; {
	case c == '(' || c == '{':
		end := closing(runes, i+1)
		inner := string(runes[i+2 : end])
		switch {
		case c == '{':
			return e.lookup(inner), end, nil
		case strings.HasPrefix(inner, "(") && strings.HasSuffix(inner, ")"):
			n, err := evalArith(inner[1:len(inner)-1], e.lookup)
			return strconv.FormatInt(n, 10), end, err
		}
		return e.substitute(inner), end, nil
	case isNameStart(c):
		end := i + 1
		for end+1 < len(runes) && isNameChar(runes[end+1]) {
			end++
		}
		return e.lookup(string(runes[i+1 : end+1])), end, nil
	default: // $?, $$, $#, $1…
		return e.lookup(string(c)), i + 1, nil
	}
}

// maxSubstitutionTurns bounds a command substitution: its commands never wait (a sleep in it
// returns at once), and a loop in it ends after this many turns.
const maxSubstitutionTurns = 100

// substitute runs script as a subshell (a copy of the variables; unknown commands are "not
// found") and returns what it printed on stdout, without trailing newlines.
func (e expander) substitute(script string) string {
	steps, err := parseScriptSteps(script, unknownNotFound)
	if err != nil {
		_ = e.stderr.write(runtimeapi.Stderr, err.Error()+"\n")
		return ""
	}
	sub := &process{program: steps, status: e.p.status, vars: map[string]string{}}
	for k, val := range e.p.vars {
		sub.vars[k] = val
	}
	out := &captureSink{stderr: e.stderr}
	for range maxSubstitutionTurns {
		stop, _, err := sub.run(e.v, out)
		if err != nil || stop.kind == stepExit {
			break
		}
	}
	e.p.status = sub.status
	return strings.TrimRight(out.stdout.String(), "\n")
}

// captureSink keeps stdout (a command substitution's value) and passes stderr on.
type captureSink struct {
	stdout strings.Builder
	stderr sink
}

func (c *captureSink) write(stream runtimeapi.LogStreamType, text string) error {
	if stream == runtimeapi.Stderr {
		return c.stderr.write(stream, text)
	}
	c.stdout.WriteString(text)
	return nil
}

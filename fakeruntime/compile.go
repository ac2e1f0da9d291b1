package fakeruntime

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Control flow: the simple commands parseScript cuts (script.go) are compiled into a flat list of
// steps with jumps, which the interpreter runs with its program counter (process.go):
//
//	while C; do B; done       C; jump-if-failed END; B; jump C; END: true
//	until C; do B; done       the same with jump-if-succeeded
//	if C; then B; elif C2; then B2; else B3; fi
//	                          C; jump-if-failed L1; B; jump FI; L1: C2; jump-if-failed L2; B2;
//	                          jump FI; L2: B3 (or true); FI:
//	for V in WORDS; do B; done
//	                          FOR: for V WORDS, to END when done; B; jump FOR; END: for-done
//	break, continue           jump END, jump to the loop's head
//
// A keyword counts only at the start of a command ("echo done" prints done).

// keywords are the reserved words the compiler knows.
var keywords = []string{"while", "until", "do", "done", "if", "then", "elif", "else", "fi", "for"}

// assignment matches NAME=VALUE.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// compiler compiles commands into steps.
type compiler struct {
	cmds  []command
	i     int
	mode  unknownMode
	steps []step
	loops []*loopLabels // the loops around the command being compiled, innermost last
}

// loopLabels are the jumps of one loop: where continue goes, and the breaks to patch to its end.
type loopLabels struct {
	head   int
	breaks []int
}

// compile compiles a script's commands; its error is sh's syntax error.
func compile(cmds []command, mode unknownMode) ([]step, error) {
	c := &compiler{cmds: cmds, mode: mode}
	if _, err := c.list(); err != nil {
		return nil, err
	}
	return c.steps, nil
}

// keyword is the reserved word that starts command i, or "".
func (c *compiler) keyword() string {
	if w := c.cmds[c.i].words; len(w) > 0 && slices.Contains(keywords, w[0]) {
		return w[0]
	}
	return ""
}

// take consumes the keyword that starts the current command; the rest of its words, if any, are
// the next command ("do echo hi").
func (c *compiler) take() {
	cmd := &c.cmds[c.i]
	if len(cmd.words) > 1 {
		cmd.words, cmd.cond = cmd.words[1:], always
		return
	}
	c.i++
}

func (c *compiler) emit(st step) int {
	c.steps = append(c.steps, st)
	return len(c.steps) - 1
}

// list compiles commands until one that starts with a keyword of stop (left for the caller to
// take), which it returns; with no stop, until the end.
func (c *compiler) list(stop ...string) (string, error) {
	for c.i < len(c.cmds) {
		kw := c.keyword()
		if kw != "" && slices.Contains(stop, kw) {
			return kw, nil
		}
		if kw != "" && c.cmds[c.i].cond == ifPiped {
			return "", fmt.Errorf("sh: the fake runtime's shell cannot pipe into %q: only into a simple command (head, grep, wc, …)", kw)
		}
		if kw != "" && c.cmds[c.i].cond != always {
			return "", fmt.Errorf("sh: the fake runtime's shell cannot join %q with && or ||: put it on its own line", kw)
		}
		var err error
		switch kw {
		case "while", "until":
			err = c.whileLoop(kw == "until")
		case "if":
			err = c.ifClause()
		case "for":
			err = c.forLoop()
		case "":
			c.simple(c.cmds[c.i])
			c.i++
		default:
			return "", fmt.Errorf("sh: syntax error: unexpected %q", kw)
		}
		if err != nil {
			return "", err
		}
	}
	if len(stop) > 0 {
		return "", fmt.Errorf("sh: syntax error: unexpected end of file (expecting %q)", stop[len(stop)-1])
	}
	return "", nil
}

// whileLoop compiles while (or until) C; do B; done.
func (c *compiler) whileLoop(until bool) error {
	head := len(c.steps)
	c.take()
	if _, err := c.list("do"); err != nil {
		return err
	}
	exit := step{kind: stepJump, cond: ifFailed}
	if until {
		exit.cond = ifSucceeded
	}
	c.take()
	return c.loopBody(head, c.emit(exit))
}

// loopBody compiles B; done of a loop whose head is at head and whose exit jump is at exit.
func (c *compiler) loopBody(head, exit int) error {
	loop := &loopLabels{head: head}
	c.loops = append(c.loops, loop)
	if _, err := c.list("done"); err != nil {
		return err
	}
	c.take()
	c.loops = c.loops[:len(c.loops)-1]
	c.emit(step{kind: stepJump, target: head})
	done := step{kind: stepBuiltin, argv: []string{"true"}} // the loop's status: 0
	if exit == head {
		done = step{kind: stepForDone, target: head} // a for loop: forget its words (after a break too)
	}
	end := c.emit(done)
	c.steps[exit].target = end
	for _, b := range loop.breaks {
		c.steps[b].target = end
	}
	return nil
}

// forLoop compiles for V in WORDS; do B; done.
func (c *compiler) forLoop() error {
	w := c.cmds[c.i].words
	if len(w) < 2 || !assignment.MatchString(w[1]+"=") {
		return fmt.Errorf("sh: syntax error: bad for loop variable")
	}
	if len(w) > 2 && w[2] != "in" {
		return fmt.Errorf("sh: syntax error: unexpected %q (expecting \"in\")", w[2])
	}
	var words []string
	if len(w) > 3 {
		words = w[3:]
	}
	c.i++
	if c.i == len(c.cmds) || c.keyword() != "do" {
		return fmt.Errorf("sh: syntax error: expecting \"do\" after for %s", w[1])
	}
	c.take()
	head := c.emit(step{kind: stepFor, name: w[1], argv: words})
	return c.loopBody(head, head)
}

// ifClause compiles if C; then B; [elif C; then B;]… [else B;] fi.
func (c *compiler) ifClause() error {
	var ends []int
	for {
		c.take() // if or elif
		if _, err := c.list("then"); err != nil {
			return err
		}
		c.take()
		skip := c.emit(step{kind: stepJump, cond: ifFailed})
		kw, err := c.list("elif", "else", "fi")
		if err != nil {
			return err
		}
		ends = append(ends, c.emit(step{kind: stepJump}))
		c.steps[skip].target = len(c.steps)
		if kw == "elif" {
			continue
		}
		if kw == "else" {
			c.take()
			if _, err := c.list("fi"); err != nil {
				return err
			}
		} else {
			c.emit(step{kind: stepBuiltin, argv: []string{"true"}}) // no branch ran: status 0
		}
		c.take()
		for _, e := range ends {
			c.steps[e].target = len(c.steps)
		}
		return nil
	}
}

// simple compiles a simple command: assignments (NAME=VALUE), break and continue, a command whose
// words have expansions (parsed when it runs), or any other command (parsed now).
func (c *compiler) simple(cmd command) {
	n := 0
	for n < len(cmd.words) && assignment.MatchString(cmd.words[n]) {
		n++
	}
	if n > 0 {
		c.emit(step{kind: stepAssign, cond: cmd.cond, argv: cmd.words[:n]})
		if n == len(cmd.words) {
			return
		}
		cmd.words, cmd.cond = cmd.words[n:], ifSucceeded // ran only if the assignments expanded
	}
	if len(cmd.words) > 0 && (cmd.words[0] == "break" || cmd.words[0] == "continue") && len(c.loops) > 0 {
		loop := c.loops[len(c.loops)-1]
		at := c.emit(step{kind: stepJump, cond: cmd.cond, target: loop.head})
		if cmd.words[0] == "break" {
			loop.breaks = append(loop.breaks, at)
		}
		return
	}
	var st step
	if slices.ContainsFunc(cmd.words, hasExpansion) {
		st = step{kind: stepExpand, argv: cmd.words, mode: c.mode}
	} else {
		st = parseCommand(cmd.words, c.mode)
	}
	st.cond, st.bg, st.redirs, st.pipe = cmd.cond, st.bg || cmd.bg, cmd.redirs, cmd.pipe
	c.emit(st)
}

// showWords is words as the script wrote them.
func showWords(words []string) string {
	shown := make([]string, len(words))
	for i, w := range words {
		shown[i] = showWord(w)
	}
	return strings.Join(shown, " ")
}

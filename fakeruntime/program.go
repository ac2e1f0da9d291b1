package fakeruntime

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stepKind is one instruction of a container program (see the grammar in doc.go).
type stepKind int

const (
	stepEcho    stepKind = iota // write text to stdout
	stepSleep                   // wait d on the clock
	stepForever                 // block until stopped
	stepExit                    // exit with code (or $?), after writing text to stderr
	stepBuiltin                 // a built-in command (builtins.go): look at or change the container's files
	stepFail                    // write text to stderr, and $? is code: a command used wrongly
	stepNoop                    // a command outside the grammar in exec: succeeds, prints nothing
	stepStdin                   // cat without arguments: copy stdin to stdout until it ends
	stepServe                   // serve (serve.go): answer on the pod IP until the container stops
	stepAlloc                   // alloc: the container's working set grows by n bytes (usage.go)
	stepBurn                    // burn: the container uses n more nanocores of CPU (usage.go)
	stepJump                    // go to step target (if cond holds): loops and if (compile.go)
	stepFor                     // for name in argv: the next word into name, or to target when done
	stepForDone                 // the end of the for loop at target: its words are forgotten, $? is 0
	stepAssign                  // NAME=VALUE… (argv): set the shell's variables
	stepExpand                  // a command whose words (argv) are expanded, then parsed, when it runs
)

// step is one parsed command.
type step struct {
	kind       stepKind
	cond       runIf      // when it runs, given $?
	bg         bool       // ended by "&": sleep, cat and unknown servers do nothing, serve does not wait
	redirs     []redirect // where its output goes
	text       string     // stepEcho; stepExit and stepFail: a message
	noEOL      bool       // stepEcho: echo -n, no newline at the end
	d          time.Duration
	code       int32      // stepExit, stepFail
	lastStatus bool       // stepExit: `exit` without a number exits with $?
	argv       []string   // stepBuiltin, stepNoop: the command and its arguments
	serve      *serveSpec // stepServe
	n          uint64     // stepAlloc: bytes; stepBurn: nanocores
	hold       bool       // stepAlloc, stepBurn, stepBuiltin (tail -f): then block until stopped
	pipe       bool       // its stdout is the next command's stdin ("a | b")
	burnAlso   uint64     // stepAlloc: nanocores burnt too (stress --vm and --cpu)
	target     int        // stepJump, stepFor: the step to go to
	name       string     // stepFor: the variable
	mode       unknownMode
}

func (s step) String() string {
	var b strings.Builder
	switch s.cond {
	case ifSucceeded:
		b.WriteString("&& ")
	case ifFailed:
		b.WriteString("|| ")
	}
	switch s.kind {
	case stepEcho:
		if s.noEOL {
			b.WriteString("echo -n ")
		} else {
			b.WriteString("echo ")
		}
		fmt.Fprintf(&b, "%q", s.text)
	case stepSleep:
		b.WriteString("sleep " + s.d.String())
	case stepForever:
		b.WriteString("forever")
		if s.text != "" {
			fmt.Fprintf(&b, " %q", s.text)
		}
	case stepJump:
		fmt.Fprintf(&b, "jump %d", s.target)
	case stepFor:
		fmt.Fprintf(&b, "for %s in %s (else jump %d)", s.name, showWords(s.argv), s.target)
	case stepForDone:
		fmt.Fprintf(&b, "end for %d", s.target)
	case stepAssign, stepExpand:
		b.WriteString(showWords(s.argv))
	case stepExit:
		if s.lastStatus {
			b.WriteString("exit $?")
		} else {
			fmt.Fprintf(&b, "exit %d", s.code)
		}
		if s.text != "" {
			fmt.Fprintf(&b, " %q", s.text)
		}
	case stepFail:
		fmt.Fprintf(&b, "fail %d %q", s.code, s.text)
	case stepBuiltin, stepNoop:
		if s.kind == stepNoop {
			b.WriteString("noop ")
		}
		b.WriteString(strings.Join(s.argv, " "))
	case stepStdin:
		b.WriteString("cat stdin")
	case stepServe:
		b.WriteString(s.serve.String())
	case stepAlloc:
		fmt.Fprintf(&b, "alloc %d", s.n)
	case stepBurn:
		fmt.Fprintf(&b, "burn %dn", s.n)
	}
	for _, r := range s.redirs {
		b.WriteString(" " + r.String())
	}
	if s.bg {
		b.WriteString(" &")
	}
	if s.pipe {
		b.WriteString(" |")
	}
	return b.String()
}

// unknownMode says what a command outside the grammar does.
type unknownMode int

const (
	unknownRunsForever unknownMode = iota // container main program: a server that never ends
	unknownSucceeds                       // ExecSync: succeed with no output
	unknownNotFound                       // the interactive shell: "sh: NAME: not found", status 127
)

// parseProgram turns a command line (command followed by args) into steps. It never fails: words
// it does not understand become what a shell would do (an error message and an exit status), and
// unknown commands follow mode. An empty command runs forever, like the pause image.
func parseProgram(argv []string, mode unknownMode) []step {
	if len(argv) == 0 {
		return []step{{kind: stepForever}}
	}
	if path.Base(argv[0]) == "agnhost" {
		if a, ok := agnhost(argv[1:]); ok {
			argv = a
		}
	}
	script, ok := shellScript(argv)
	if !ok {
		return []step{parseCommand(argv, mode)}
	}
	steps, err := parseScriptSteps(script, mode)
	if err != nil {
		return []step{{kind: stepExit, code: 2, text: err.Error()}}
	}
	return steps
}

// parseScriptSteps turns a script (or a line typed at the interactive shell) into steps; the
// error is sh's syntax error.
func parseScriptSteps(script string, mode unknownMode) ([]step, error) {
	cmds, err := parseScript(script)
	if err != nil {
		return nil, err
	}
	return compile(cmds, mode)
}

// isInteractiveShell says whether argv starts a shell that reads its commands from stdin: a
// shell with no -c script, like `sh`, `/bin/sh -i` or `bash -l`. With a tty it is interactive.
func isInteractiveShell(argv []string) bool {
	if len(argv) == 0 || !slices.Contains(shellNames, path.Base(argv[0])) {
		return false
	}
	for _, a := range argv[1:] {
		if a == "" || a[0] != '-' || (strings.Contains(a, "c") && !strings.HasPrefix(a, "--")) {
			return false // an argument is a script file, or -c has a script
		}
	}
	return true
}

// isBuiltin says whether builtins.go runs the command name.
func isBuiltin(name string) bool {
	switch name {
	case "true", ":", "false", "env", "printenv", "hostname", "cat", "ls", "touch", "rm", "mkdir", "ln", "test", "[", "[[", "date", "seq", "wget", "curl",
		"id", "printf", "nslookup", "cd", "pwd":
		return true
	}
	return isFilter(name)
}

// parseCommand parses one simple command.
func parseCommand(words []string, mode unknownMode) step {
	if len(words) == 0 { // only redirections, like "> F"
		return step{kind: stepBuiltin, argv: []string{"true"}}
	}
	name, args := path.Base(words[0]), words[1:]
	switch {
	case name == "echo":
		return parseEcho(args)
	case name == "etcd": // the docs' grpc liveness pod: etcd's gRPC health on its client port
		return step{kind: stepServe, serve: &serveSpec{proto: "grpc", port: etcdPort(args), health: "SERVING"}}
	case name == "exec" && len(args) > 0: // the shell's exec runs CMD (what follows is not skipped)
		return parseCommand(args, mode)
	case name == "exit":
		if len(args) == 0 {
			return step{kind: stepExit, lastStatus: true}
		}
		code, err := strconv.ParseInt(args[0], 10, 32)
		if err != nil || code < 0 {
			return step{kind: stepExit, code: 2, text: fmt.Sprintf("sh: exit: Illegal number: %s", args[0])}
		}
		return step{kind: stepExit, code: int32(code % 256)}
	case name == "cat" && len(args) == 0:
		return step{kind: stepStdin}
	case name == "tail" && (slices.Contains(args, "-f") || slices.Contains(args, "-F")):
		// tail -f prints the file's last lines, then what is written to it, until stopped.
		return step{kind: stepBuiltin, argv: append([]string{name}, args...), hold: true}
	case isBuiltin(name):
		return step{kind: stepBuiltin, argv: append([]string{name}, args...)}
	case name == "sleep":
		if len(args) != 1 {
			return step{kind: stepFail, code: 1, text: "sleep: usage: sleep N | sleep infinity"}
		}
		if args[0] == "infinity" || args[0] == "inf" {
			return step{kind: stepForever}
		}
		d, ok := parseSleep(args[0])
		if !ok {
			return step{kind: stepFail, code: 1, text: fmt.Sprintf("sleep: invalid time interval '%s'", args[0])}
		}
		return step{kind: stepSleep, d: d}
	case name == "alloc" || name == "burn":
		return parseUsage(name, args)
	case name == "stress":
		return parseStress(args)
	case name == "perl":
		if st, ok := parsePerl(words); ok {
			return st
		}
	case name == "serve" || name == "httpd":
		spec, bg, msg := parseServe(name, args)
		if spec == nil {
			return step{kind: stepFail, code: 2, text: msg}
		}
		return step{kind: stepServe, serve: spec, bg: bg}
	}
	switch mode {
	case unknownSucceeds:
		return step{kind: stepNoop, argv: words}
	case unknownNotFound:
		return step{kind: stepFail, code: 127, text: fmt.Sprintf("sh: %s: not found", words[0])}
	}
	return step{kind: stepForever, text: notModelled(fmt.Sprintf("%q", words[0]))}
}

// echoFlags matches echo's options: -n (no newline), -e (backslash escapes), -E (none).
var echoFlags = regexp.MustCompile(`^-[neE]+$`)

// parseEcho parses echo [-neE] WORDS…, as busybox's echo: with -e, \n \t \\ and \c (stop
// here, no newline) are interpreted.
func parseEcho(args []string) step {
	noEOL, escapes := false, false
	for len(args) > 0 && echoFlags.MatchString(args[0]) {
		noEOL = noEOL || strings.Contains(args[0], "n")
		escapes = strings.Contains(args[0], "e") || (escapes && !strings.Contains(args[0], "E"))
		args = args[1:]
	}
	text := strings.Join(args, " ")
	if escapes {
		if i := strings.Index(text, `\c`); i >= 0 {
			text, noEOL = text[:i], true
		}
		text = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(text)
	}
	return step{kind: stepEcho, text: text, noEOL: noEOL}
}

// parseSleep parses coreutils sleep's argument: a non-negative number with an optional unit
// suffix s, m, h or d.
func parseSleep(arg string) (time.Duration, bool) {
	units := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	unit := time.Second
	if n := len(arg); n > 0 && units[arg[n-1:]] > 0 {
		unit, arg = units[arg[n-1:]], arg[:n-1]
	}
	f, err := strconv.ParseFloat(arg, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f*float64(unit) > math.MaxInt64 { // +Inf is too long too
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

package fake

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// stepKind is one instruction of a container program (see the grammar in doc.go).
type stepKind int

const (
	stepEcho    stepKind = iota // write text to stream
	stepSleep                   // wait d on the clock
	stepForever                 // block until stopped
	stepExit                    // exit with code
	stepInspect                 // env, hostname, cat FILE, ls: look at the container's env and mounts
	stepStdin                   // cat without arguments: copy stdin to stdout until it ends
)

// step is one parsed instruction.
type step struct {
	kind   stepKind
	text   string                   // stepEcho
	noEOL  bool                     // stepEcho: echo -n, no newline at the end
	stream runtimeapi.LogStreamType // stepEcho
	d      time.Duration            // stepSleep
	code   int32                    // stepExit
	argv   []string                 // stepInspect: the command and its arguments
}

func (s step) String() string {
	switch s.kind {
	case stepEcho:
		if s.noEOL {
			return fmt.Sprintf("echo -n(%s) %q", s.stream, s.text)
		}
		return fmt.Sprintf("echo(%s) %q", s.stream, s.text)
	case stepSleep:
		return "sleep " + s.d.String()
	case stepForever:
		return "forever"
	case stepInspect:
		return "inspect " + strings.Join(s.argv, " ")
	case stepStdin:
		return "cat stdin"
	default:
		return fmt.Sprintf("exit %d", s.code)
	}
}

// unknownMode says what a command outside the grammar does.
type unknownMode int

const (
	unknownRunsForever unknownMode = iota // container main program: a server that never ends
	unknownSucceeds                       // ExecSync: succeed with no output
)

// parseProgram turns a command line (command followed by args) into steps. It never fails: words
// it does not understand become what a shell would do (an error message and an exit code), and
// unknown commands follow mode. An empty command runs forever, like the pause image.
func parseProgram(argv []string, mode unknownMode) []step {
	if len(argv) == 0 {
		return []step{{kind: stepForever}}
	}
	shells := []string{"sh", "bash", "ash", "dash", "zsh"} // the shells that understand -c
	if len(argv) >= 3 && slices.Contains(shells, path.Base(argv[0])) && argv[1] == "-c" {
		var steps []step
		for _, cmd := range splitScript(argv[2]) {
			steps = append(steps, parseCommand(shellWords(cmd), mode)...)
		}
		return steps
	}
	return parseCommand(argv, mode)
}

// splitScript splits a shell script into simple commands on ";", "&&" and newlines; blank ones
// parse to no steps. Quotes are not special here: keep scripts simple.
func splitScript(script string) []string {
	return strings.FieldsFunc(strings.ReplaceAll(script, "&&", ";"), func(r rune) bool { return r == ';' || r == '\n' })
}

// shellWords splits a simple command into words, honouring single and double quotes.
func shellWords(cmd string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range cmd {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// parseCommand parses one simple command.
func parseCommand(words []string, mode unknownMode) []step {
	if len(words) == 0 {
		return nil
	}
	name, args := path.Base(words[0]), words[1:]
	switch name {
	case "echo":
		stream := runtimeapi.Stdout
		if n := len(args); n > 0 && (args[n-1] == ">&2" || args[n-1] == "1>&2") {
			stream, args = runtimeapi.Stderr, args[:n-1]
		}
		noEOL := len(args) > 0 && args[0] == "-n"
		if noEOL {
			args = args[1:]
		}
		return []step{{kind: stepEcho, text: strings.Join(args, " "), stream: stream, noEOL: noEOL}}
	case "true", ":":
		return nil
	case "false":
		return []step{{kind: stepExit, code: 1}}
	case "exit":
		if len(args) == 0 {
			return []step{{kind: stepExit, code: 0}}
		}
		code, err := strconv.ParseInt(args[0], 10, 32)
		if err != nil || code < 0 {
			return shellError(fmt.Sprintf("sh: exit: Illegal number: %s", args[0]), 2)
		}
		return []step{{kind: stepExit, code: int32(code % 256)}}
	case "env", "printenv", "hostname", "cat", "ls":
		if name == "cat" && len(args) == 0 {
			return []step{{kind: stepStdin}}
		}
		return []step{{kind: stepInspect, argv: append([]string{name}, args...)}}
	case "sleep":
		if len(args) != 1 {
			return shellError("sleep: usage: sleep N | sleep infinity", 1)
		}
		if args[0] == "infinity" || args[0] == "inf" {
			return []step{{kind: stepForever}}
		}
		d, ok := parseSleep(args[0])
		if !ok {
			return shellError(fmt.Sprintf("sleep: invalid time interval '%s'", args[0]), 1)
		}
		return []step{{kind: stepSleep, d: d}}
	}
	if mode == unknownSucceeds {
		return nil
	}
	return []step{{kind: stepForever}}
}

// shellError is what a shell does with a bad command: a message on stderr, then exit.
func shellError(message string, code int32) []step {
	return []step{{kind: stepEcho, text: message, stream: runtimeapi.Stderr}, {kind: stepExit, code: code}}
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

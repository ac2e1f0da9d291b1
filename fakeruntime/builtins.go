package fakeruntime

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// view is what a container's commands see: its environment, its hostname, its filesystem (CRI
// mounts over an in-memory layer, rootfs.go) and the address `serve` listens on. Nothing else
// of the host is reachable.
type view struct {
	env      []*runtimeapi.KeyValue
	hostname string
	fs       *rootfs
	serveIP  netip.Addr       // the pod IP (127.0.0.1 with the host's network); invalid: no sandbox
	now      func() time.Time // the runtime's clock, for date
	// reachable says whether a container of this runtime serves on an address: wget and curl
	// connect to nothing else (fetch.go). Nil: nothing is.
	reachable func(netip.AddrPort) bool
	user      *runtimeapi.LinuxContainerSecurityContext // who the container runs as, for id
	stdin     string                                    // what the command before "|" printed
}

// runBuiltin runs one of the grammar's built-in commands (isBuiltin) against a container's view
// and returns what it prints and its exit status, with busybox's messages.
func runBuiltin(v view, argv []string) (stdout, stderr string, status int32) {
	var out, errs strings.Builder
	name, args := argv[0], argv[1:]
	fail := func(format string, a ...any) {
		fmt.Fprintf(&errs, format+"\n", a...)
		status = 1
	}
	switch name {
	case "true", ":":
	case "false":
		status = 1
	case "env", "printenv":
		status = printenv(v.env, args, &out)
	case "hostname":
		out.WriteString(v.hostname + "\n")
	case "date":
		text, err := date(v.now, args)
		if err != nil {
			return "", err.Error() + "\n", 1
		}
		out.WriteString(text + "\n")
	case "wget", "curl":
		return fetch(v, name, args)
	case "seq":
		text, err := seq(args)
		if err != nil {
			return "", err.Error() + "\n", 1
		}
		out.WriteString(text)
	case "cat":
		for _, p := range operands(args) {
			data, err := v.fs.readFile(p)
			if err != nil {
				fail("cat: can't open '%s': %s", p, errText(err))
				continue
			}
			out.Write(data)
		}
	case "ls":
		ls(v.fs, operands(args), &out, fail)
	case "touch":
		for _, p := range operands(args) {
			if err := v.fs.touch(p); err != nil {
				fail("touch: %s: %s", p, errText(err))
			}
		}
	case "rm":
		recursive, force := hasFlag(args, 'r') || hasFlag(args, 'R'), hasFlag(args, 'f')
		for _, p := range operands(args) {
			if err := v.fs.remove(p, recursive); err != nil && (!force || !errors.Is(err, syscall.ENOENT)) {
				fail("rm: can't remove '%s': %s", p, errText(err))
			}
		}
	case "mkdir":
		for _, p := range operands(args) {
			if err := v.fs.mkdir(p, hasFlag(args, 'p')); err != nil {
				fail("mkdir: can't create directory '%s': %s", p, errText(err))
			}
		}
	case "ln":
		ln(v.fs, args, fail)
	case "test", "[", "[[":
		if closer := map[string]string{"[": "]", "[[": "]]"}[name]; closer != "" {
			if len(args) == 0 || args[len(args)-1] != closer {
				return "", fmt.Sprintf("sh: %s: missing %s\n", name, closer), 2
			}
			args = args[:len(args)-1]
		}
		ok, err := testExpr(v.fs, args)
		if err != nil {
			return "", fmt.Sprintf("sh: %s: %v\n", name, err), 2
		}
		if !ok {
			status = 1
		}
	default:
		return runTextBuiltin(v, name, args)
	}
	return out.String(), errs.String(), status
}

// printenv writes the container's environment (NAME=VALUE lines), or the values of the names
// asked for, one a line; its status is 1 if one of them is not set.
func printenv(env []*runtimeapi.KeyValue, names []string, out *strings.Builder) int32 {
	if len(names) == 0 {
		for _, kv := range env {
			fmt.Fprintf(out, "%s=%s\n", kv.GetKey(), kv.GetValue())
		}
		return 0
	}
	var status int32
	for _, name := range names {
		found := false
		for _, kv := range env {
			if kv.GetKey() == name {
				fmt.Fprintf(out, "%s\n", kv.GetValue())
				found = true
				break
			}
		}
		if !found {
			status = 1
		}
	}
	return status
}

// operands are a command's arguments without its options ("-p", "-rf"); "--" ends the options.
func operands(args []string) []string {
	for i, a := range args {
		switch {
		case a == "--":
			return args[i+1:]
		case len(a) < 2 || a[0] != '-':
			return args[i:]
		}
	}
	return nil
}

// hasFlag says whether the options before the operands include the letter f.
func hasFlag(args []string, f rune) bool {
	for _, a := range args[:len(args)-len(operands(args))] {
		if a != "--" && strings.ContainsRune(a[1:], f) {
			return true
		}
	}
	return false
}

// ls lists directories (one name per line) and names files, as busybox's ls -1 does; with
// several operands each directory gets a "DIR:" heading.
func ls(fs *rootfs, paths []string, out *strings.Builder, fail func(string, ...any)) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for i, p := range paths {
		kind, err := fs.stat(p)
		if err != nil {
			fail("ls: %s: %s", p, errText(err))
			continue
		}
		if kind != kindDir {
			out.WriteString(p + "\n")
			continue
		}
		names, err := fs.readDir(p)
		if err != nil {
			fail("ls: %s: %s", p, errText(err))
			continue
		}
		if len(paths) > 1 {
			if i > 0 {
				out.WriteString("\n")
			}
			out.WriteString(p + ":\n")
		}
		for _, n := range names {
			out.WriteString(n + "\n")
		}
	}
}

// ln makes symbolic links (ln -s TARGET LINK): only inside a mounted volume, where the host
// filesystem holds them; the in-memory layer has none, and there are no hard links.
func ln(fs *rootfs, args []string, fail func(string, ...any)) {
	ops := operands(args)
	if !hasFlag(args, 's') || len(ops) != 2 {
		fail("ln: only ln -s TARGET LINK is modelled")
		return
	}
	if err := fs.symlink(ops[0], ops[1]); err != nil {
		fail("ln: %s: %s", ops[1], errText(err))
	}
}

// testExpr evaluates the arguments of test (or [ … ]): file tests -e -f -d -s (and -r -w -x,
// which are -e here), string tests -n -z = !=, integer comparisons -eq -ne -lt -le -gt -ge,
// and "!" in front. An error is a malformed expression (exit status 2).
func testExpr(fs *rootfs, args []string) (bool, error) {
	if len(args) > 0 && args[0] == "!" {
		ok, err := testExpr(fs, args[1:])
		return !ok, err
	}
	switch len(args) {
	case 0:
		return false, nil
	case 1:
		return args[0] != "", nil
	case 2:
		op, operand := args[0], args[1]
		switch op {
		case "-n":
			return operand != "", nil
		case "-z":
			return operand == "", nil
		case "-e", "-f", "-d", "-s", "-r", "-w", "-x":
			kind, err := fs.stat(operand)
			switch {
			case err != nil:
				return false, nil
			case op == "-f":
				return kind == kindFile, nil
			case op == "-d":
				return kind == kindDir, nil
			case op == "-s":
				data, err := fs.readFile(operand)
				return err == nil && len(data) > 0, nil
			}
			return true, nil
		}
		return false, fmt.Errorf("%s: unknown operand", op)
	case 3:
		a, op, b := args[0], args[1], args[2]
		switch op {
		case "=", "==":
			return a == b, nil
		case "!=":
			return a != b, nil
		}
		x, errA := strconv.ParseInt(a, 10, 64)
		y, errB := strconv.ParseInt(b, 10, 64)
		if errA != nil || errB != nil {
			return false, fmt.Errorf("%s %s %s: integer expression expected", a, op, b)
		}
		switch op {
		case "-eq":
			return x == y, nil
		case "-ne":
			return x != y, nil
		case "-lt":
			return x < y, nil
		case "-le":
			return x <= y, nil
		case "-gt":
			return x > y, nil
		case "-ge":
			return x >= y, nil
		}
		return false, fmt.Errorf("%s: unknown operand", op)
	}
	return false, fmt.Errorf("%s: unknown operand", args[0])
}

// date prints the clock's time in UTC, in busybox's default format ("Fri Nov 27 05:50:00 UTC
// 2026") or in +FORMAT with the usual strftime conversions (%Y %m %d %H %M %S %s %a %b %e %Z %T
// %F %D %j %%). -u and -R are accepted.
func date(now func() time.Time, args []string) (string, error) {
	t := time.Unix(0, 0).UTC()
	if now != nil {
		t = now().UTC()
	}
	format := "+%a %b %e %H:%M:%S %Z %Y"
	for _, a := range args {
		switch {
		case a == "-u" || a == "--utc":
		case a == "-R":
			format = "+%a, %d %b %Y %H:%M:%S +0000"
		case strings.HasPrefix(a, "+"):
			format = a
		default:
			return "", fmt.Errorf("date: the fake runtime's date knows only -u, -R and +FORMAT, not %q", a)
		}
	}
	layouts := map[byte]string{'Y': "2006", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05", 'a': "Mon",
		'b': "Jan", 'e': "_2", 'Z': "MST", 'T': "15:04:05", 'F': "2006-01-02", 'D': "01/02/06", 'y': "06"}
	var b strings.Builder
	for i := 1; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch spec := format[i]; {
		case layouts[spec] != "":
			b.WriteString(t.Format(layouts[spec]))
		case spec == 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case spec == 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case spec == 'n':
			b.WriteByte('\n')
		default:
			b.WriteByte('%')
			b.WriteByte(spec)
		}
	}
	return b.String(), nil
}

// seq prints the integers from FIRST (default 1) to LAST, one a line: seq LAST | seq FIRST LAST
// | seq FIRST STEP LAST. At most 100000 lines.
func seq(args []string) (string, error) {
	nums := make([]int64, len(args))
	for i, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return "", fmt.Errorf("seq: invalid number '%s'", a)
		}
		nums[i] = n
	}
	first, step, last := int64(1), int64(1), int64(0)
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, step, last = nums[0], nums[1], nums[2]
	default:
		return "", errors.New("seq: usage: seq [FIRST [STEP]] LAST")
	}
	if step == 0 || (last-first)/step > 100000 {
		return "", errors.New("seq: the fake runtime's seq prints at most 100000 numbers, with a STEP other than 0")
	}
	var b strings.Builder
	for n := first; (step > 0 && n <= last) || (step < 0 && n >= last); n += step {
		fmt.Fprintf(&b, "%d\n", n)
	}
	return b.String(), nil
}

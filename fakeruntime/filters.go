package fakeruntime

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The built-ins the docs' examples put in pipes and the commands their pages type: head, tail,
// grep, rev and wc read their files, or what the command before "|" printed; id answers from the
// container's CRI security context; printf formats; nslookup answers as a pod without a DNS
// server would. Each returns stdout, stderr and its exit status, with busybox's messages.

// runTextBuiltin runs the built-ins of this file, and pwd; any other name is not found.
func runTextBuiltin(v view, name string, args []string) (string, string, int32) {
	switch name {
	case "head", "tail", "grep", "rev", "wc":
		return runFilter(v, name, args)
	case "id":
		return id(v.user, args)
	case "pwd":
		return v.fs.workDir + "\n", "", 0
	case "printf":
		return printf(args)
	case "nslookup":
		return nslookup(v, args)
	}
	return "", fmt.Sprintf("sh: %s: not found\n", name), 127
}

// runFilter runs head, tail, grep, rev or wc (isFilter).
func runFilter(v view, name string, args []string) (string, string, int32) {
	switch name {
	case "head", "tail":
		return headTail(v, name, args)
	case "grep":
		return grep(v, args)
	case "rev":
		text, stderr, status := filterInput(v, name, args)
		var out strings.Builder
		for _, l := range lines(text) {
			r := []rune(strings.TrimSuffix(l, "\n"))
			slices.Reverse(r)
			out.WriteString(string(r) + "\n")
		}
		return out.String(), stderr, status
	}
	return wc(v, args)
}

// isFilter says whether runFilter runs the command name.
func isFilter(name string) bool {
	return slices.Contains([]string{"head", "tail", "grep", "rev", "wc"}, name)
}

// filterInput is what a filter reads: its files in turn, or stdin (a pipe's text; a container has no
// other stdin) without any. Missing files are reported on stderr and the status is 1.
func filterInput(v view, name string, files []string) (text, stderr string, status int32) {
	if len(files) == 0 || (len(files) == 1 && files[0] == "-") {
		return v.stdin, "", 0
	}
	var b, errs strings.Builder
	for _, f := range files {
		data, err := v.fs.readFile(f)
		if err != nil {
			fmt.Fprintf(&errs, "%s: can't open '%s': %s\n", name, f, errText(err))
			status = 1
			continue
		}
		b.Write(data)
	}
	return b.String(), errs.String(), status
}

// lines cuts text into lines, each with its newline (the last may have none).
func lines(text string) []string {
	if text == "" {
		return nil
	}
	ls := strings.SplitAfter(text, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// headTail prints the first (head) or last (tail) N lines, 10 by default: -n N, -nN, -N; tail
// -n +K (also -n+K) prints from line K on. tail -f and -F are parsed by parseCommand (print,
// then follow the file); here they are accepted.
func headTail(v view, name string, args []string) (string, string, int32) {
	n, from := 10, false
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-n" && i+1 < len(args) {
			i++
			a = "-n" + args[i]
		}
		switch {
		case strings.HasPrefix(a, "-n") || (len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9'):
			num := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "n")
			from = strings.HasPrefix(num, "+")
			k, err := strconv.Atoi(strings.TrimPrefix(num, "+"))
			if err != nil || k < 0 {
				return "", fmt.Sprintf("%s: invalid number '%s'\n", name, num), 1
			}
			n = k
		case a == "-f" || a == "-F" || a == "-q":
		default:
			files = append(files, a)
		}
	}
	text, stderr, status := filterInput(v, name, files)
	ls := lines(text)
	switch {
	case name == "head":
		ls = ls[:min(n, len(ls))]
	case from:
		ls = ls[min(max(n-1, 0), len(ls)):]
	default:
		ls = ls[max(0, len(ls)-n):]
	}
	return strings.Join(ls, ""), stderr, status
}

// grep prints the lines that match PATTERN (an extended regular expression, as grep -E; plain
// words mean the same either way): -i ignores case, -v inverts, -c counts, -q prints nothing.
// Its status is 0 if a line matched, 1 if none did, 2 on an error.
func grep(v view, args []string) (string, string, int32) {
	var flags string
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		flags += args[0][1:]
		args = args[1:]
	}
	if len(args) == 0 {
		return "", "grep: usage: grep [-icqvE] PATTERN [FILE]...\n", 2
	}
	pattern := args[0]
	if strings.ContainsRune(flags, 'i') {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Sprintf("grep: bad regex '%s': %v\n", args[0], err), 2
	}
	text, stderr, status := filterInput(v, "grep", args[1:])
	var out strings.Builder
	count := 0
	for _, l := range lines(text) {
		if re.MatchString(strings.TrimSuffix(l, "\n")) != strings.ContainsRune(flags, 'v') {
			count++
			out.WriteString(strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	switch {
	case status != 0:
		status = 2
	case count == 0:
		status = 1
	}
	switch {
	case strings.ContainsRune(flags, 'q'):
		return "", stderr, status
	case strings.ContainsRune(flags, 'c'):
		return fmt.Sprintf("%d\n", count), stderr, status
	}
	return out.String(), stderr, status
}

// wc counts lines (-l), words (-w) and bytes (-c) of its input; without options all three,
// as busybox prints them.
func wc(v view, args []string) (string, string, int32) {
	files := operands(args)
	text, stderr, status := filterInput(v, "wc", files)
	counts := map[rune]int{'l': strings.Count(text, "\n"), 'w': len(strings.Fields(text)), 'c': len(text)}
	var fields []string
	for _, f := range "lwc" {
		if hasFlag(args, f) {
			fields = append(fields, strconv.Itoa(counts[f]))
		}
	}
	if len(fields) == 0 {
		fields = []string{fmt.Sprintf("%7d %7d %7d", counts['l'], counts['w'], counts['c'])}
	}
	if len(files) > 0 {
		fields = append(fields, strings.Join(files, " "))
	}
	return strings.Join(fields, " ") + "\n", stderr, status
}

// id prints the user and groups the container runs as, from its CRI security context (the
// kubelet's runAsUser, runAsGroup, fsGroup and supplementalGroups): "uid=1000 gid=3000
// groups=2000,3000,4000". Only root has a name: images have no /etc/passwd here. -u and -g
// print one number.
func id(sc *runtimeapi.LinuxContainerSecurityContext, args []string) (string, string, int32) {
	uid, gid := sc.GetRunAsUser().GetValue(), sc.GetRunAsGroup().GetValue()
	groups := slices.Sorted(slices.Values(append([]int64{gid}, sc.GetSupplementalGroups()...)))
	groups = slices.Compact(groups)
	named := func(n int64) string {
		if n == 0 {
			return "0(root)"
		}
		return strconv.FormatInt(n, 10)
	}
	switch {
	case slices.Contains(args, "-u"):
		return fmt.Sprintf("%d\n", uid), "", 0
	case slices.Contains(args, "-g"):
		return fmt.Sprintf("%d\n", gid), "", 0
	case len(args) > 0:
		return "", fmt.Sprintf("id: the fake runtime's id knows only -u and -g, not %q\n", args[0]), 1
	}
	gs := make([]string, len(groups))
	for i, g := range groups {
		gs[i] = named(g)
	}
	return fmt.Sprintf("uid=%s gid=%s groups=%s\n", named(uid), named(gid), strings.Join(gs, ",")), "", 0
}

// printfVerb matches one conversion of printf's format: %s %d %i %c %x %% (with flags and width).
var printfVerb = regexp.MustCompile(`%[-0 +#]*[0-9]*(\.[0-9]+)?[sdicx%]`)

// printf formats its arguments as printf(1): the format is reused while arguments remain,
// \n \t \\ are escapes, and a missing argument is "" (or 0).
func printf(args []string) (string, string, int32) {
	if len(args) == 0 {
		return "", "printf: usage: printf FORMAT [ARGUMENT]...\n", 1
	}
	format := strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(args[0])
	args = args[1:]
	var out strings.Builder
	for {
		used := false
		out.WriteString(printfVerb.ReplaceAllStringFunc(format, func(verb string) string {
			if verb == "%%" {
				return "%"
			}
			arg := ""
			if len(args) > 0 {
				arg, args, used = args[0], args[1:], true
			}
			switch verb[len(verb)-1] {
			case 'd', 'i':
				n, _ := strconv.ParseInt(arg, 10, 64)
				return fmt.Sprintf(verb[:len(verb)-1]+"d", n)
			case 'x':
				n, _ := strconv.ParseInt(arg, 10, 64)
				return fmt.Sprintf(verb, n)
			case 'c':
				return arg[:min(1, len(arg))]
			}
			return fmt.Sprintf(verb, arg)
		}))
		if !used || len(args) == 0 {
			return out.String(), "", 0
		}
	}
}

// nslookup answers as busybox's does in a pod the fake gives no DNS server: localhost and the
// pod's own hostname resolve (from its /etc/hosts), any other name fails — so an init container
// that waits for a Service's name (`until nslookup myservice; do sleep 2; done`) keeps waiting.
func nslookup(v view, args []string) (string, string, int32) {
	names := operands(args)
	if len(names) == 0 {
		return "", "nslookup: usage: nslookup HOST [DNS_SERVER]\n", 1
	}
	name := strings.TrimSuffix(names[0], ".")
	addr := ""
	switch {
	case name == "localhost":
		addr = "127.0.0.1"
	case name == v.hostname && v.serveIP.IsValid():
		addr = v.serveIP.String()
	default:
		return "", fmt.Sprintf("nslookup: can't resolve '%s'\n", names[0]), 1
	}
	return fmt.Sprintf("Server:    (none, from /etc/hosts)\n\nName:      %s\nAddress 1: %s\n", name, addr), "", 0
}

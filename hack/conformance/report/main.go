// Command report turns ginkgo's JSON report of a `make conformance` run into what a reader wants:
// a table of passed / failed / skipped per top-level Describe group ("[sig-node] Pods", …) with
// the totals, on stdout, and one line per spec with its result — failures with the first line of
// their message and where they failed — in a file.
//
//	go run ./report --json _output/conformance/report.json --out _output/conformance/results.txt
//
// With --expect FILE (the list of specs known to pass, one full name per line, '#' comments) it
// also fails — exit status 1 — when a listed spec did not pass (failed, or never ran), and names
// the specs that passed but are not listed yet. --focus-regexp FILE prints a ginkgo --focus
// expression that selects exactly the listed specs.
//
// Specs that the focus and skip expressions filtered out are in ginkgo's report as "skipped"
// with no message; they are left out. A spec that ran and skipped itself (e2eskipper: "Only
// supported for providers …") counts as skipped, with its reason.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// suiteReport is the part of ginkgo v2's types.Report we read (ginkgo --json-report writes a list).
type suiteReport struct {
	SuiteDescription string
	SpecReports      []specReport
}

type specReport struct {
	ContainerHierarchyTexts []string
	LeafNodeText            string
	LeafNodeType            string
	State                   string
	RunTime                 time.Duration
	Failure                 struct {
		Message  string
		Location struct {
			FileName   string
			LineNumber int
		}
	}
}

// result is one spec as the table and the file show it.
type result struct {
	group, name, state, why string
	runTime                 time.Duration
}

func main() {
	in := flag.String("json", "", "ginkgo's --json-report file")
	out := flag.String("out", "", "write every spec with its result here")
	expect := flag.String("expect", "", "fail unless every spec listed in this file passed")
	focus := flag.String("focus-regexp", "", "print a --focus expression for the specs listed in this file, and exit")
	flag.Parse()
	if *focus != "" {
		names, err := readList(*focus)
		if err == nil && len(names) == 0 {
			err = fmt.Errorf("%s lists no spec", *focus)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		fmt.Println(focusRegexp(names))
		return
	}
	if err := run(*in, *out, *expect, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(in, out, expect string, w io.Writer) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var suites []suiteReport
	if err := json.Unmarshal(data, &suites); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	results, setup := collect(suites)
	if len(setup) > 0 {
		fmt.Fprintln(w, "The suite's setup failed (no spec could run):")
		for _, r := range setup {
			fmt.Fprintf(w, "  %s %s: %s\n", r.state, r.name, r.why)
		}
	}
	writeTable(w, results)
	if out == "" {
		return nil
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	writeList(f, append(setup, results...))
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nEvery spec with its result: %s\n", out)
	if expect == "" {
		return nil
	}
	names, err := readList(expect)
	if err != nil {
		return err
	}
	return compare(w, expect, names, results)
}

// readList reads a list of spec names: one per line; blank lines and '#' comments are skipped.
func readList(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names, nil
}

// focusRegexp matches exactly the given full spec names. Ginkgo matches --focus against the
// suite's description, a space, and the spec's Describe and It texts joined by spaces (the names
// results.txt and the list hold), so a name is anchored at its end and after a space.
func focusRegexp(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "(?:^| )(?:" + strings.Join(quoted, "|") + ")$"
}

// compare fails when a listed spec did not pass — a regression — and names the specs that
// passed without being listed, so the list can grow.
func compare(w io.Writer, listPath string, names []string, results []result) error {
	state := make(map[string]string, len(results))
	for _, r := range results {
		state[r.name] = r.state
	}
	listed := make(map[string]bool, len(names))
	var regressions []string
	for _, n := range names {
		listed[n] = true
		switch st := state[n]; st {
		case "passed":
		case "":
			regressions = append(regressions, "NOT RUN     "+n)
		default:
			regressions = append(regressions, fmt.Sprintf("%-11s %s", strings.ToUpper(st), n))
		}
	}
	var added []string
	for _, r := range results {
		if r.state == "passed" && !listed[r.name] {
			added = append(added, r.name)
		}
	}
	if len(added) > 0 {
		fmt.Fprintf(w, "\nPassed, not yet in %s (add them):\n", listPath)
		for _, n := range added {
			fmt.Fprintln(w, "  "+n)
		}
	}
	if len(regressions) > 0 {
		fmt.Fprintf(w, "\n%d of the %d specs listed in %s did not pass:\n", len(regressions), len(names), listPath)
		for _, r := range regressions {
			fmt.Fprintln(w, "  "+r)
		}
		return fmt.Errorf("%d listed specs did not pass", len(regressions))
	}
	fmt.Fprintf(w, "\nAll %d specs listed in %s passed.\n", len(names), listPath)
	return nil
}

// collect returns the specs that ran (or skipped themselves), and the suite-level nodes that did
// not pass (a failed SynchronizedBeforeSuite fails every spec).
func collect(suites []suiteReport) (specs, setup []result) {
	for _, s := range suites {
		for _, sr := range s.SpecReports {
			why := firstLine(sr.Failure.Message)
			if sr.Failure.Location.FileName != "" && sr.State != "skipped" {
				why += fmt.Sprintf(" (%s:%d)", trimPath(sr.Failure.Location.FileName), sr.Failure.Location.LineNumber)
			}
			if sr.LeafNodeType != "It" {
				if sr.State != "passed" && sr.State != "skipped" {
					setup = append(setup, result{name: sr.LeafNodeType, state: sr.State, why: why})
				}
				continue
			}
			if sr.State == "skipped" && sr.Failure.Message == "" {
				continue // filtered out by focus/skip: never ran
			}
			group := "(no Describe)"
			if len(sr.ContainerHierarchyTexts) > 0 {
				group = groupName(sr.ContainerHierarchyTexts[0])
			}
			name := strings.Join(append(append([]string(nil), sr.ContainerHierarchyTexts...), sr.LeafNodeText), " ")
			specs = append(specs, result{group: group, name: name, state: sr.State, why: why, runTime: sr.RunTime})
		}
	}
	sort.SliceStable(specs, func(i, j int) bool {
		if specs[i].group != specs[j].group {
			return specs[i].group < specs[j].group
		}
		return specs[i].name < specs[j].name
	})
	return specs, setup
}

// writeTable prints passed / failed / skipped per group; any state other than passed and
// skipped (failed, timedout, panicked, interrupted, aborted) counts as failed.
func writeTable(w io.Writer, results []result) {
	type counts struct{ passed, failed, skipped int }
	byGroup := map[string]*counts{}
	var groups []string
	var total counts
	for _, r := range results {
		c := byGroup[r.group]
		if c == nil {
			c = &counts{}
			byGroup[r.group] = c
			groups = append(groups, r.group)
		}
		switch r.state {
		case "passed":
			c.passed++
			total.passed++
		case "skipped":
			c.skipped++
			total.skipped++
		default:
			c.failed++
			total.failed++
		}
	}
	width := len("GROUP")
	for _, g := range groups {
		width = max(width, len(g))
	}
	row := func(name string, a, b, c any) { fmt.Fprintf(w, "%-*s  %6v  %6v  %7v\n", width, name, a, b, c) }
	row("GROUP", "PASSED", "FAILED", "SKIPPED")
	for _, g := range groups {
		c := byGroup[g]
		row(g, c.passed, c.failed, c.skipped)
	}
	row(fmt.Sprintf("TOTAL (%d specs)", len(results)), total.passed, total.failed, total.skipped)
}

// writeList writes one line per spec: state, run time, name, and why it failed or skipped.
func writeList(w io.Writer, results []result) {
	for _, r := range results {
		line := fmt.Sprintf("%-11s %6.1fs  %s", strings.ToUpper(r.state), r.runTime.Seconds(), r.name)
		if r.state != "passed" && r.why != "" {
			line += "\n" + strings.Repeat(" ", 22) + r.why
		}
		fmt.Fprintln(w, line)
	}
}

// label is a ginkgo label written into a spec's text: [NodeConformance], [FeatureGate:X], [Beta] …
var label = regexp.MustCompile(`\s*\[[^\]]*\]`)

// groupName is a top-level Describe's text without its labels, after its SIG: "[sig-node]
// [NodeConformance] [FeatureGate:SidecarContainers] Probing restartable init container" becomes
// "[sig-node] Probing restartable init container".
func groupName(text string) string {
	sig := ""
	if strings.HasPrefix(text, "[sig-") {
		if i := strings.Index(text, "]"); i > 0 {
			sig, text = text[:i+1]+" ", text[i+1:]
		}
	}
	return sig + strings.TrimSpace(label.ReplaceAllString(text, ""))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// trimPath shortens a source path to the part from the module root (k8s.io/kubernetes@…/test/…
// becomes test/…).
func trimPath(p string) string {
	if i := strings.Index(p, "/test/e2e/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

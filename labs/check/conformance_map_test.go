package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/conformance-map.md has one row per Describe group of the specs `make conformance` can
// select (e2e.test v1.36.3: 411 [Conformance] specs after the skips of SUITE=conformance, 236
// [NodeConformance] specs after those of the default suite). TestLabCodeRefs checks its code
// references; TestConformanceMapGroups checks that it still covers every group: every group of a
// results table in docs/conformance.md, the group of every spec make test-conformance holds us to
// (hack/conformance/passing.txt), and as many specs as e2e.test selects.
func TestConformanceMapGroups(t *testing.T) {
	root := repoRootForRefs(t)
	groups, conf, node, err := conformanceMapGroups(filepath.Join(root, "docs", "conformance-map.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The counts of e2e.test v1.36.3; a new Kubernetes version means a new map.
	if conf != 411 || node != 236 {
		t.Errorf("the map's groups count %d [Conformance] and %d [NodeConformance] specs; e2e.test v1.36.3 selects 411 and 236: a group's row is missing or miscounted", conf, node)
	}
	results, err := resultTableGroups(filepath.Join(root, "docs", "conformance.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatal(`found no "| group | passed | failed | skipped |" table in docs/conformance.md: has its format changed?`)
	}
	for _, g := range results {
		if !groups[g] {
			t.Errorf("docs/conformance.md reports group %q, which docs/conformance-map.md has no row for: add one", g)
		}
	}
	specs, err := passingSpecs(filepath.Join(root, "hack", "conformance", "passing.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs {
		if mapGroupOf(groups, spec) == "" {
			t.Errorf("hack/conformance/passing.txt lists %q, whose group docs/conformance-map.md has no row for: add one", spec)
		}
	}
	t.Logf("%d groups in the map; %d groups of docs/conformance.md and %d passing specs are in them", len(groups), len(results), len(specs))
}

// mapRowRE reads a map row's first cell: "[sig-node] Pods (10 C, 8 N) — common/node/pods.go",
// "[sig-network] DNS ✦ (8 C) — …", "[sig-node] NodeLease (3 N) — …", "[sig-node] Override
// hostname of Pod (7 N; `[Beta]`, …) — …": the group, then its [Conformance] and
// [NodeConformance] counts.
var mapRowRE = regexp.MustCompile(`^(\[sig-[\w-]+\](?: .+?)?)(?: ✦)? \((?:(\d+) C)?(?:, )?(?:(\d+) N)?(?:;[^)]*)?\) — `)

// conformanceMapGroups returns the groups of the map's tables (those whose header starts with
// "group") and the sums of their C and N counts.
func conformanceMapGroups(path string) (groups map[string]bool, conf, node int, err error) {
	groups = map[string]bool{}
	err = eachTableRow(path, "group (", func(cells []string) {
		m := mapRowRE.FindStringSubmatch(strings.TrimSpace(cells[0]))
		if m == nil {
			return
		}
		groups[m[1]] = true
		c, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		conf, node = conf+c, node+n
	})
	return groups, conf, node, err
}

// resultTableGroups returns the groups of docs/conformance.md's result tables.
func resultTableGroups(path string) ([]string, error) {
	var groups []string
	err := eachTableRow(path, "group | passed", func(cells []string) {
		if g := strings.Trim(cells[0], " *"); !strings.HasPrefix(g, "TOTAL") {
			groups = append(groups, g)
		}
	})
	return groups, err
}

// eachTableRow calls row with the cells of every body row of the Markdown tables whose header
// row starts with "| "+header.
func eachTableRow(path, header string, row func(cells []string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !strings.HasPrefix(line, "|"):
			in = false
		case strings.HasPrefix(line, "| "+header):
			in = true
		case in && !isSeparatorRow(tableCells(line)):
			row(tableCells(line))
		}
	}
	return sc.Err()
}

// passingSpecs reads hack/conformance/passing.txt: one spec name a line, # comments.
func passingSpecs(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var specs []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			specs = append(specs, line)
		}
	}
	return specs, nil
}

// mapGroupOf is the longest group of the map a spec's name starts with, once the labels after
// its SIG are dropped ("[sig-node] [NodeConformance] Probing restartable init container should …"
// → "[sig-node] Probing restartable init container should …"), as hack/conformance/report groups
// specs; "" if none. A group that is a SIG alone ("[sig-node]": the [DRA] specs) would be a
// prefix of every spec of that SIG, so it is left out here.
func mapGroupOf(groups map[string]bool, spec string) string {
	sig, rest, ok := strings.Cut(spec, "] ")
	if !ok {
		return ""
	}
	name := sig + "] " + strings.Join(strings.Fields(regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(rest, "")), " ")
	best := ""
	for g := range groups {
		if !strings.Contains(g, "] ") {
			continue
		}
		if (name == g || strings.HasPrefix(name, g+" ")) && len(g) > len(best) {
			best = g
		}
	}
	// A Describe of labels only ("[sig-node] [DRA] CRUD Tests …"): the report prints the SIG alone.
	if best == "" && strings.HasPrefix(rest, "[") && groups[sig+"]"] {
		best = sig + "]"
	}
	return best
}

// The checks can fail: a spec of a group the map lacks, a group reported but not mapped.
func TestConformanceMapGroupsCatchMissingOnes(t *testing.T) {
	dir := t.TempDir()
	mapDoc := filepath.Join(dir, "map.md")
	if err := os.WriteFile(mapDoc, []byte(strings.Join([]string{
		"| group (specs) — file in test/e2e | the kubelet concept | ours |",
		"|---|---|---|",
		"| [sig-node] (4 C) — dra/dra.go | API only | — |",
		"| [sig-node] Pods (10 C, 8 N) — common/node/pods.go | a pod's life | — |",
		"| [sig-network] DNS ✦ (8 C) — network/dns.go | resolv.conf | — |",
		"| [sig-node] Override hostname of Pod (7 N; `[Beta]`, so not in `SUITE=conformance`) — x.go | hostname | — |",
		"| [sig-node] Pods Extended (pod generation) (3 C) — node/pods.go | observedGeneration | — |",
	}, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	groups, conf, node, err := conformanceMapGroups(mapDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 5 || conf != 25 || node != 15 || !groups["[sig-node]"] || !groups["[sig-node] Pods Extended (pod generation)"] || !groups["[sig-network] DNS"] {
		t.Errorf("groups %v, %d C, %d N; want the 5 groups, 25 C, 15 N", groups, conf, node)
	}
	for spec, want := range map[string]string{
		"[sig-node] Pods should get a host IP [NodeConformance] [Conformance]":                                                         "[sig-node] Pods",
		"[sig-node] Pods Extended (pod generation) Pod Generation custom-set generation [Conformance]":                                 "[sig-node] Pods Extended (pod generation)",
		"[sig-node] Override hostname of Pod [NodeConformance] [FeatureGate:HostnameOverride] [Beta] a pod with only hostnameOverride": "[sig-node] Override hostname of Pod",
		"[sig-node] Probing container should be restarted [NodeConformance]":                                                           "", // not mapped: not "[sig-node]" either
		"[sig-network] DNSSEC should resolve [Conformance]":                                                                            "",
	} {
		if got := mapGroupOf(groups, spec); got != want {
			t.Errorf("mapGroupOf(%q) = %q, want %q", spec, got, want)
		}
	}
}

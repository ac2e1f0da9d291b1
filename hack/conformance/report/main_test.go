package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestGroupName(t *testing.T) {
	for in, want := range map[string]string{
		"[sig-node] Pods": "[sig-node] Pods",
		"[sig-node] [NodeConformance] [FeatureGate:SidecarContainers] Probing restartable init container": "[sig-node] Probing restartable init container",
		"[sig-node] Sysctls [LinuxOnly] [NodeConformance]":                                                "[sig-node] Sysctls",
	} {
		if got := groupName(in); got != want {
			t.Errorf("groupName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Specs the focus filtered out are "skipped" without a message and are left out; a spec that
// skipped itself counts; a failed setup node is reported apart.
func TestCollectAndTable(t *testing.T) {
	spec := func(state, msg string) specReport {
		r := specReport{ContainerHierarchyTexts: []string{"[sig-node] Pods"}, LeafNodeText: "x " + state, LeafNodeType: "It", State: state}
		r.Failure.Message = msg
		return r
	}
	setup := specReport{LeafNodeType: "SynchronizedBeforeSuite", State: "failed"}
	setup.Failure.Message = "no nodes"
	specs, failedSetup := collect([]suiteReport{{SpecReports: []specReport{
		spec("passed", ""), spec("failed", "boom\nmore"), spec("skipped", ""), spec("skipped", "Only supported for providers [gce]"), spec("timedout", "slow"), setup,
	}}})
	if len(specs) != 4 || len(failedSetup) != 1 {
		t.Fatalf("specs %+v, setup %+v", specs, failedSetup)
	}
	var b strings.Builder
	writeTable(&b, specs)
	if !strings.Contains(b.String(), "[sig-node] Pods       1       2        1") {
		t.Errorf("table:\n%s", b.String())
	}
}

// The focus expression selects exactly the listed names, metacharacters and all.
func TestFocusRegexp(t *testing.T) {
	names := []string{"[sig-node] Pods should be updated [NodeConformance] [Conformance]", "[sig-node] Probing container should *not* be restarted (1)"}
	re := regexp.MustCompile(focusRegexp(names))
	for _, n := range names {
		if !re.MatchString("Kubernetes e2e suite "+n) || !re.MatchString(n) {
			t.Errorf("%q does not match its own expression", n)
		}
	}
	for _, n := range []string{"[sig-node] Pods should be updated", "x" + names[0], "suite x" + names[0], "[sig-node] Probing container should not be restarted (1)"} {
		if re.MatchString(n) {
			t.Errorf("%q matches, but is not listed", n)
		}
	}
}

// A listed spec that failed or never ran fails the comparison; a passing unlisted one is named.
func TestCompare(t *testing.T) {
	results := []result{{name: "a", state: "passed"}, {name: "b", state: "failed"}, {name: "new", state: "passed"}}
	var b strings.Builder
	if err := compare(&b, "list", []string{"a"}, results); err != nil {
		t.Errorf("compare with every listed spec passing: %v", err)
	}
	if !strings.Contains(b.String(), "  new\n") {
		t.Errorf("the unlisted passing spec is not named:\n%s", b.String())
	}
	b.Reset()
	err := compare(&b, "list", []string{"a", "b", "gone"}, results)
	if err == nil || !strings.Contains(b.String(), "FAILED      b") || !strings.Contains(b.String(), "NOT RUN     gone") {
		t.Errorf("compare = %v, output:\n%s", err, b.String())
	}
}

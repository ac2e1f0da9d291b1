package main

import (
	"context"
	"fmt"
)

// A check is one line of a lab's report. run reads state and never changes it (except where a
// lab's doc says so: exec and port-forward into the lab's own pod).
type check struct {
	name string // what is checked, said as a noun phrase: "node vm is Ready"
	// gate: when this check fails, none after it is run (they would all fail the same way).
	gate bool
	// needs names earlier checks this one builds on; it is not run unless they passed.
	needs []string
	run   func(ctx context.Context, e *env) result
}

// result is what one check found.
type result struct {
	ok   bool
	what string // what was found, or what is missing
	fix  string // for a missing check: what to do, in plain words
}

func passed(format string, args ...any) result {
	return result{ok: true, what: fmt.Sprintf(format, args...)}
}

func missing(what, fix string) result {
	return result{what: what, fix: fix}
}

// String is the line printed for the result.
func (r result) String() string {
	if r.ok {
		return "[OK]      " + r.what
	}
	if r.fix == "" {
		return "[MISSING] " + r.what
	}
	return "[MISSING] " + r.what + " → " + r.fix
}

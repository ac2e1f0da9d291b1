package journal

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Column widths of Text: wide enough for every source and kind, and for most pod names.
const (
	sourceWidth = len(SourcePodWorker)      // the longest source
	kindWidth   = len("configCh RECONCILE") // the longest kind
	podWidth    = 32
)

// Text is one aligned line for e, as `minikubelet journal` prints it, with the time in loc:
//
//	42 10:04:05.123  cri       StartContainer     default/web                      container=app duration=1.1ms id=3f…
//
// (the Seq is right-aligned in 6 columns). Fields follow the message, sorted by key. Pure.
func (e Event) Text(loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%6d %s  %-*s %-*s %-*s", e.Seq, e.Time.In(loc).Format("15:04:05.000"),
		sourceWidth, e.Source, kindWidth, e.Kind, podWidth, orDash(e.Pod))
	if e.Message != "" {
		b.WriteString(" ")
		b.WriteString(e.Message)
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := e.Fields[k]
		if strings.ContainsAny(v, " \t\n\"") {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	return strings.TrimRight(b.String(), " ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TextHeader is the line above the Text lines, naming their columns.
func TextHeader() string {
	return fmt.Sprintf("%6s %-12s  %-*s %-*s %-*s %s", "SEQ", "TIME", sourceWidth, "SOURCE", kindWidth, "KIND", podWidth, "POD", "DETAILS")
}

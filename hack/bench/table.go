package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// printTable prints both kubelets side by side with the ratio ours/theirs and the issue's
// targets, then the --nodes runs.
func printTable(out io.Writer, r *report) {
	ours, theirs := r.Minikubelet, r.HollowNode
	fmt.Fprintf(out, "\nminikubelet vs kubemark's hollow node (kubelet v1.36.3), one local control plane, %s\n", r.Machine)
	fmt.Fprintf(out, "(%d pods bound at once by %d creators; idle window %s; kubeAPIQPS 50, kubeAPIBurst 100 on both)\n\n",
		r.Config["pods"], r.Config["creators"], r.Config["idle"])
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "metric\tminikubelet\thollow node\tours/theirs\ttarget\t\t")
	row := func(name string, get func(*sideResult) float64, format, target string, limit float64) {
		a := get(ours)
		if theirs == nil {
			fmt.Fprintf(w, "%s\t"+format+"\t-\t-\t%s\t\t\n", name, a, target)
			return
		}
		t := get(theirs)
		ratio, verdict := "-", ""
		if t > 0 {
			ratio = fmt.Sprintf("%.2f", a/t)
			if limit > 0 {
				verdict = "met"
				if a/t > limit {
					verdict = "NOT met"
				}
			}
		}
		fmt.Fprintf(w, "%s\t"+format+"\t"+format+"\t%s\t%s\t%s\t\n", name, a, t, ratio, target, verdict)
	}
	pods := fmt.Sprint(r.Config["pods"])
	row("start → Ready (ms)", func(s *sideResult) float64 { return s.StartToReadyMS }, "%.0f", "≤ 0.50", 0.5)
	row("RSS idle (MB)", func(s *sideResult) float64 { return s.Idle.mb() }, "%.1f", "≤ 0.33", 1.0/3)
	row("  anonymous (MB)", func(s *sideResult) float64 { return float64(s.Idle.AnonKiB) / 1024 }, "%.1f", "", 0)
	row("  file-backed: the binary (MB)", func(s *sideResult) float64 { return float64(s.Idle.FileKiB) / 1024 }, "%.1f", "", 0)
	row("RSS with "+pods+" pods (MB)", func(s *sideResult) float64 { return s.WithPods.mb() }, "%.1f", "", 0)
	row("  anonymous (MB)", func(s *sideResult) float64 { return float64(s.WithPods.AnonKiB) / 1024 }, "%.1f", "", 0)
	row("idle CPU (s per minute)", func(s *sideResult) float64 { return s.IdleCPUSecondsPerMinute }, "%.2f", "≤ 0.50", 0.5)
	row("API requests per idle minute", func(s *sideResult) float64 { return s.IdleRequestsPerMinute }, "%.1f", "", 0)
	row(pods+" pods created→Ready p50 (ms)", func(s *sideResult) float64 { return s.Pods.P50MS }, "%.0f", "", 0)
	row("  p90 (ms)", func(s *sideResult) float64 { return s.Pods.P90MS }, "%.0f", "", 0)
	row("  p99 (ms)", func(s *sideResult) float64 { return s.Pods.P99MS }, "%.0f", "≤ 0.50", 0.5)
	row("  max (ms)", func(s *sideResult) float64 { return s.Pods.MaxMS }, "%.0f", "", 0)
	row("  wall, first create → last Ready (ms)", func(s *sideResult) float64 { return s.Pods.WallMS }, "%.0f", "", 0)
	row("  delete all → all gone (ms)", func(s *sideResult) float64 { return s.Pods.DeleteWallMS }, "%.0f", "", 0)
	row("API requests per pod", func(s *sideResult) float64 { return s.RequestsPerPod }, "%.1f", "≤ 1.00", 1)
	_ = w.Flush()

	fmt.Fprintln(out, "\nAPI requests per pod, by verb and resource:")
	printBreakdown(out, r, func(s *sideResult) map[string]int { return s.PodRequests }, float64(ours.Pods.N))

	if len(r.RSSFloor) > 0 {
		printFloor(out, r)
	}

	if r.Evented != nil {
		printEvented(out, r)
	}
	if len(r.ManyNodes) > 0 {
		printMany(out, r)
	}
}

// printEvented prints minikubelet with the EventedPLEG gate off and on.
func printEvented(out io.Writer, r *report) {
	off, on := r.Minikubelet, r.Evented
	fmt.Fprintln(out, "\nminikubelet, EventedPLEG off (relist every 1 s) and on (runtime's container events; relist every 5 min):")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "metric\toff\ton\t")
	row := func(name, format string, get func(*sideResult) float64) {
		fmt.Fprintf(w, "%s\t"+format+"\t"+format+"\t\n", name, get(off), get(on))
	}
	row("PLEG relists per idle minute", "%.1f", func(s *sideResult) float64 { return s.RelistsPerIdleMinute })
	row("container killed → in the API (ms)", "%.0f", func(s *sideResult) float64 { return s.KillToAPIMS })
	row(fmt.Sprint(r.Config["pods"], " pods created→Ready p99 (ms)"), "%.0f", func(s *sideResult) float64 { return s.Pods.P99MS })
	row("idle CPU (s per minute)", "%.2f", func(s *sideResult) float64 { return s.IdleCPUSecondsPerMinute })
	row("API requests per idle minute", "%.1f", func(s *sideResult) float64 { return s.IdleRequestsPerMinute })
	_ = w.Flush()
}

// printMany prints the --nodes N runs beside the hollow node (one process per node).
func printMany(out io.Writer, r *report) {
	fmt.Fprintln(out, "\nminikubelet --nodes N: N node agents in one process (each its own identity, Lease, status, pod workers, PLEG, fake runtime state)")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "N\tstart → all Ready (s)\tregistrations/s\tRSS (MB)\tRSS per node (MB)\tidle CPU (s/min)\tAPI requests per node per idle min\tNotReady while idle\toldest Lease while idle (s)\t")
	for _, m := range r.ManyNodes {
		fmt.Fprintf(w, "%d\t%.0f\t%s\t%.1f\t%.2f\t%.2f\t%.2f\t%d of %d over %.0f s\t%.0f\t\n", m.Nodes, m.StartToAllReadyMS/1000, m.StartLogRegistrationsPerSecond,
			m.Memory.mb(), m.RSSPerNodeMB, m.IdleCPUSecondsPerMinute, m.IdleRequestsPerNodePerMinute, m.NotReadyDuringIdle, m.Nodes, m.IdleSeconds, m.MaxLeaseAgeDuringIdleSeconds)
	}
	_ = w.Flush()
	if h := r.HollowNode; h != nil {
		fmt.Fprintf(out, "hollow node, one process per node: RSS %.1f MB, idle CPU %.2f s/min, %.1f API requests per idle minute\n", h.Idle.mb(), h.IdleCPUSecondsPerMinute, h.IdleRequestsPerMinute)
	}
	for _, m := range r.ManyNodes {
		printBeside(out, m)
	}
}

// printBeside prints a --nodes N run's idle API requests per node and minute beside those of the
// hollow nodes started with it and counted over the same window, by verb and resource.
func printBeside(out io.Writer, m manyResult) {
	h := m.Beside
	if h == nil {
		return
	}
	minutes := m.IdleSeconds / 60
	fmt.Fprintf(out, "\n--nodes %d beside %d hollow nodes started with it, over the same %.0f s idle window: API requests per node per minute\n", m.Nodes, h.Nodes, m.IdleSeconds)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "request\tminikubelet\thollow node\t")
	for _, k := range sortedKeys(m.IdleRequests, h.IdleRequests) {
		fmt.Fprintf(w, "%s\t%.3f\t%.3f\t\n", k, float64(m.IdleRequests[k])/float64(m.Nodes)/minutes, float64(h.IdleRequests[k])/float64(h.Nodes)/minutes)
	}
	fmt.Fprintf(w, "all\t%.3f\t%.3f\t\n", m.IdleRequestsPerNodePerMinute, h.IdleRequestsPerNodePerMinute)
	_ = w.Flush()
}

// sortedKeys is the keys of all the maps, sorted, each once.
func sortedKeys(maps ...map[string]int) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// printBreakdown prints one line per verb and resource with both sides' counts divided by n.
func printBreakdown(out io.Writer, r *report, get func(*sideResult) map[string]int, n float64) {
	var hollow map[string]int
	if r.HollowNode != nil {
		hollow = get(r.HollowNode)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "request\tminikubelet\thollow node\t")
	for _, k := range sortedKeys(get(r.Minikubelet), hollow) {
		theirs := "-"
		if hollow != nil {
			theirs = fmt.Sprintf("%.2f", float64(hollow[k])/n)
		}
		fmt.Fprintf(w, "%s\t%.2f\t%s\t\n", strings.TrimSpace(k), float64(get(r.Minikubelet)[k])/n, theirs)
	}
	_ = w.Flush()
}

// printFloor prints what minikubelet's idle RSS is made of, beside the floor programs and the
// RSS target (a third of the hollow node's).
func printFloor(out io.Writer, r *report) {
	fmt.Fprintln(out, "\nWhat the idle RSS is made of (every program built the same way, static and stripped; 10 s idle):")
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "process\tRSS (MB)\tanonymous (MB)\tfile-backed (MB)\t")
	line := func(name string, m memory) {
		fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.1f\t\n", name, m.mb(), float64(m.AnonKiB)/1024, float64(m.FileKiB)/1024)
	}
	for _, f := range r.RSSFloor {
		line(f.What, f.Memory)
	}
	line("minikubelet", r.Minikubelet.Idle)
	if r.HollowNode != nil {
		fmt.Fprintf(w, "the RSS target: hollow node / 3\t%.1f\t\t\t\n", r.HollowNode.Idle.mb()/3)
	}
	_ = w.Flush()
}

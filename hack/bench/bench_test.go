package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A node's request counts once however many stages the audit log has for it (a watch at
// ResponseStarted, or at ResponseComplete if it never streamed; anything else at
// ResponseComplete); other users and requests outside the window do not count.
func TestAuditCount(t *testing.T) {
	at := func(s string) string { return `"requestReceivedTimestamp":"2026-11-24T10:00:` + s + `.000000Z"` }
	node := `"user":{"username":"system:node:n1"}`
	lines := []string{
		`{"auditID":"w1","stage":"ResponseStarted","verb":"watch",` + node + `,"objectRef":{"resource":"pods"},` + at("05") + `}`,
		`{"auditID":"w1","stage":"ResponseComplete","verb":"watch",` + node + `,"objectRef":{"resource":"pods"},` + at("05") + `}`,
		// A watch refused before it streamed (410, 429) has no ResponseStarted: it counts when it completes.
		`{"auditID":"w2","stage":"ResponseComplete","verb":"watch",` + node + `,"objectRef":{"resource":"secrets"},` + at("05") + `}`,
		`{"stage":"ResponseComplete","verb":"get",` + node + `,"objectRef":{"resource":"pods"},` + at("06") + `}`,
		`{"stage":"ResponseComplete","verb":"patch",` + node + `,"objectRef":{"resource":"pods","subresource":"status"},` + at("07") + `}`,
		`{"stage":"ResponseComplete","verb":"patch",` + node + `,"objectRef":{"resource":"pods","subresource":"status"},` + at("08") + `}`,
		`{"stage":"ResponseComplete","verb":"get","user":{"username":"system:node:n2"},"objectRef":{"resource":"pods"},` + at("06") + `}`,
		`{"stage":"ResponseComplete","verb":"get",` + node + `,"objectRef":{"resource":"pods"},` + at("30") + `}`,
		`{"stage":"ResponseComplete","verb":"get",` + node + `,"objectRef":{"resour`, // being written
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	from, _ := time.Parse(time.RFC3339, "2026-11-24T10:00:00Z")
	got, err := (&auditLogReader{path: path}).count(context.Background(), "system:node:n1", from, from.Add(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"watch pods": 1, "watch secrets": 1, "get pods": 1, "patch pods/status": 2}
	if len(got) != len(want) || total(got) != 5 {
		t.Fatalf("count = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

func TestPercentile(t *testing.T) {
	var sorted []float64
	for i := 1; i <= 100; i++ {
		sorted = append(sorted, float64(i))
	}
	for q, want := range map[float64]float64{0.5: 50, 0.9: 90, 0.99: 99, 1: 100} {
		if got := percentile(sorted, q); got != want {
			t.Errorf("p%v = %v, want %v", q*100, got, want)
		}
	}
	if got := percentile([]float64{7}, 0.99); got != 7 {
		t.Errorf("p99 of one = %v", got)
	}
}

// The test process itself: it has resident memory, and burning CPU shows in its CPU time.
func TestProcessStats(t *testing.T) {
	m, err := readMemory(os.Getpid())
	if err != nil || m.RSSKiB <= 0 || m.AnonKiB <= 0 || m.AnonKiB+m.FileKiB > m.RSSKiB+1024 {
		t.Fatalf("readMemory = %+v, %v", m, err)
	}
	before, err := cpuSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the CPU time has grown by 0.1 s; a broken reader never sees it grow.
	for deadline := time.Now().Add(30 * time.Second); ; {
		after, err := cpuSeconds(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after-before >= 0.1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU seconds still %v (from %v) after 30 s of spinning", after, before)
		}
		for x := range 1_000_000 {
			_ = x * x
		}
	}
}

// The pod burst's tracker counts a pod Ready once, at the first event showing it Running with
// Ready=True (not Pending, not Running but unready), and counts deletions.
func TestPodTracker(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{
			Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := watch.NewFake()
	defer w.Stop()
	tr := newPodTracker()
	first := time.Now()
	tr.created["a"], tr.created["b"] = first, first
	go tr.follow(w)

	w.Add(pod("a", corev1.PodPending, corev1.ConditionFalse))
	w.Modify(pod("a", corev1.PodRunning, corev1.ConditionFalse))
	w.Add(pod("b", corev1.PodRunning, corev1.ConditionTrue))
	if err := tr.waitFor(ctx, "b Ready", func(ready, _ int) bool { return ready == 1 }); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	_, aReady := tr.ready["a"]
	tr.mu.Unlock()
	if aReady {
		t.Fatal("a counts as Ready before any event showed it Running with Ready=True")
	}
	w.Modify(pod("a", corev1.PodRunning, corev1.ConditionTrue))
	if err := tr.waitFor(ctx, "a and b Ready", func(ready, _ int) bool { return ready == 2 }); err != nil {
		t.Fatal(err)
	}
	st := tr.startup([]string{"a", "b"}, first)
	if st.N != 2 || len(st.LatenciesMS) != 2 || st.LatenciesMS[0] > st.LatenciesMS[1] || st.MaxMS != st.LatenciesMS[1] || st.WallMS != st.MaxMS {
		t.Errorf("startup = %+v, want 2 sorted latencies, the larger one as max and as wall time", st)
	}

	w.Delete(pod("a", corev1.PodRunning, corev1.ConditionTrue))
	w.Delete(pod("b", corev1.PodRunning, corev1.ConditionTrue))
	if err := tr.waitFor(ctx, "all gone", func(_, gone int) bool { return gone == 2 }); err != nil {
		t.Fatal(err)
	}
	if ready, gone := tr.counts(); ready != 2 || gone != 2 {
		t.Errorf("counts = %d Ready, %d gone; want 2, 2", ready, gone)
	}
}

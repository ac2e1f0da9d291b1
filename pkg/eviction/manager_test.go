package eviction

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeSummary returns whatever Summary the test sets.
type fakeSummary struct {
	mu sync.Mutex
	s  *statsv1alpha1.Summary
}

func (f *fakeSummary) Summary(context.Context) (*statsv1alpha1.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, nil
}

func (f *fakeSummary) set(s *statsv1alpha1.Summary) { f.mu.Lock(); f.s = s; f.mu.Unlock() }

type kill struct {
	pod   string
	grace int64
	e     Eviction
}

// env is a manager on a fake clock over a 2 GiB node with a BestEffort and a Guaranteed pod.
type env struct {
	m          *Manager
	clock      *clocktesting.FakeClock
	summary    *fakeSummary
	recorder   *record.FakeRecorder
	pods       []*corev1.Pod
	besteffort *corev1.Pod
	guaranteed *corev1.Pod
	kills      []kill
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{clock: clocktesting.NewFakeClock(time.Unix(1000, 0)), summary: &fakeSummary{}, recorder: record.NewFakeRecorder(100),
		besteffort: pod("besteffort", 0, "", ""), guaranteed: pod("guaranteed", 0, "1Gi", "1Gi")}
	e.guaranteed.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	e.pods = []*corev1.Pod{e.guaranteed, e.besteffort}
	cfg.Summary, cfg.Clock, cfg.Recorder = e.summary, e.clock, e.recorder
	cfg.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "n"}
	cfg.ActivePods = func() []*corev1.Pod { return e.pods }
	cfg.KillPod = func(p *corev1.Pod, grace int64, ev Eviction) error {
		e.kills = append(e.kills, kill{p.Name, grace, ev})
		return nil
	}
	cfg.PodCleanedUp = func(*corev1.Pod) bool { return true }
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e
}

// use sets the node's and pods' memory: the Guaranteed pod uses guaranteed, the BestEffort one
// besteffort bytes, on a 2 GiB node; the stats are taken now.
func (e *env) use(guaranteed, besteffort uint64) {
	e.summary.set(summary(2048*mi, guaranteed+besteffort, e.clock.Now(),
		podStat(e.guaranteed, guaranteed, 0, 1), podStat(e.besteffort, besteffort, 0, 1)))
}

func (e *env) pass(t *testing.T) []*corev1.Pod {
	_, ctx := ktesting.NewTestContext(t)
	return e.m.synchronize(ctx)
}

// Upstream's memory eviction, pass by pass: the hard threshold met → MemoryPressure, the
// BestEffort pod evicted first (grace 1 s, reason Evicted, upstream's message, a DisruptionTarget
// condition, a Warning Event), one pod per pass; the condition stays for the transition period
// after the pressure ends, then clears.
func TestMemoryPressureEvictsBestEffortFirst(t *testing.T) {
	e := newEnv(t, Config{Thresholds: mustParse(t, map[string]string{"memory.available": "1Gi"}, nil, nil, nil),
		PressureTransitionPeriod: 30 * time.Second})
	e.use(100*mi, 10*mi)
	if evicted := e.pass(t); evicted != nil || e.m.IsUnder(corev1.NodeMemoryPressure) {
		t.Fatalf("no pressure yet: evicted %v, pressure %v", evicted, e.m.IsUnder(corev1.NodeMemoryPressure))
	}

	e.clock.Step(10 * time.Second)
	e.use(1000*mi, 100*mi) // 948Mi left, under the 1Gi threshold
	evicted := e.pass(t)
	if len(evicted) != 1 || evicted[0].Name != "besteffort" || !e.m.IsUnder(corev1.NodeMemoryPressure) {
		t.Fatalf("evicted %v (pressure %v), want only besteffort", names(evicted), e.m.IsUnder(corev1.NodeMemoryPressure))
	}
	k := e.kills[0]
	wantMsg := "The node was low on resource: memory. Threshold quantity: 1Gi, available: 948Mi. " +
		"Container app was using 100Mi, request is 0, has larger consumption of memory. "
	if k.grace != 1 || k.e.Message != wantMsg {
		t.Errorf("kill grace %d message %q, want grace 1 and %q", k.grace, k.e.Message, wantMsg)
	}
	if c := k.e.Condition; c == nil || c.Type != corev1.DisruptionTarget || c.Reason != corev1.PodReasonTerminationByKubelet || c.Message != wantMsg || c.ObservedGeneration != 1 {
		t.Errorf("condition %+v, want DisruptionTarget TerminationByKubelet with the message", c)
	}
	events := drain(e.recorder)
	if !slices.Contains(events, "Warning EvictionThresholdMet Attempting to reclaim memory") || !slices.Contains(events, "Warning Evicted "+wantMsg) {
		t.Errorf("events %q, want EvictionThresholdMet and Evicted", events)
	}

	// The BestEffort pod is gone; the next pass with fresh stats evicts the Guaranteed one.
	e.pods = []*corev1.Pod{e.guaranteed}
	e.clock.Step(10 * time.Second)
	e.use(1100*mi, 0)
	if evicted := e.pass(t); len(evicted) != 1 || evicted[0].Name != "guaranteed" {
		t.Errorf("second pass evicted %v, want guaranteed", names(evicted))
	}

	// Stale stats (same time as the last pass): nobody is evicted again.
	if evicted := e.pass(t); evicted != nil {
		t.Errorf("a pass on the same stats evicted %v", names(evicted))
	}

	// Pressure gone: the condition holds for the 30 s transition period, then clears.
	e.pods = nil
	e.clock.Step(10 * time.Second)
	e.use(0, 0)
	e.pass(t)
	if !e.m.IsUnder(corev1.NodeMemoryPressure) {
		t.Error("MemoryPressure cleared within the transition period")
	}
	e.clock.Step(30 * time.Second)
	e.use(0, 0)
	e.pass(t)
	if e.m.IsUnder(corev1.NodeMemoryPressure) {
		t.Error("MemoryPressure still set 30 s after the threshold was last met")
	}
}

// A soft threshold waits for its grace period and evicts with min(evictionMaxPodGracePeriod,
// terminationGracePeriodSeconds); the condition is set from the first pass.
func TestSoftThreshold(t *testing.T) {
	e := newEnv(t, Config{Thresholds: mustParse(t, nil, map[string]string{"memory.available": "1Gi"},
		map[string]string{"memory.available": "20s"}, nil), PressureTransitionPeriod: time.Minute, MaxPodGracePeriodSeconds: 45})
	e.pods = []*corev1.Pod{e.guaranteed}
	e.use(1500*mi, 0)
	if evicted := e.pass(t); evicted != nil || !e.m.IsUnder(corev1.NodeMemoryPressure) {
		t.Fatalf("first pass: evicted %v, pressure %v; want no eviction yet but MemoryPressure", names(evicted), e.m.IsUnder(corev1.NodeMemoryPressure))
	}
	e.clock.Step(20 * time.Second)
	e.use(1500*mi, 0)
	if evicted := e.pass(t); len(evicted) != 1 || e.kills[0].grace != 30 {
		t.Errorf("after the grace period: evicted %v, kills %+v; want guaranteed with grace min(45, 30)", names(evicted), e.kills)
	}
}

// Critical pods are never evicted; the next in rank is.
func TestCriticalPodNotEvicted(t *testing.T) {
	e := newEnv(t, Config{Thresholds: mustParse(t, map[string]string{"memory.available": "1Gi"}, nil, nil, nil)})
	e.besteffort.Spec.Priority = ptr.To[int32](2000001000) // system-node-critical: critical
	e.use(1500*mi, 0)
	if evicted := e.pass(t); len(evicted) != 1 || evicted[0].Name != "guaranteed" {
		t.Errorf("evicted %v, want guaranteed (besteffort is critical)", names(evicted))
	}
}

// A pod over its own ephemeral-storage limit is evicted whatever the node's thresholds, without
// a DisruptionTarget condition (as upstream).
func TestLocalStorageEviction(t *testing.T) {
	e := newEnv(t, Config{LocalStorageCapacityIsolation: true})
	e.besteffort.Spec.Containers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("5Mi")
	e.summary.set(summary(2048*mi, 0, e.clock.Now(), podStat(e.guaranteed, 0, 100*mi, 1), podStat(e.besteffort, 0, 10*mi, 1)))
	if evicted := e.pass(t); len(evicted) != 1 || evicted[0].Name != "besteffort" {
		t.Fatalf("evicted %v, want besteffort", names(evicted))
	}
	if k := e.kills[0]; k.grace != 1 || k.e.Condition != nil || !strings.HasPrefix(k.e.Message, "Pod ephemeral local storage usage exceeds") {
		t.Errorf("kill %+v", k)
	}
}

// Admission under pressure, as upstream's Admit.
func TestAdmit(t *testing.T) {
	e := newEnv(t, Config{Thresholds: mustParse(t, map[string]string{"memory.available": "1Gi", "nodefs.available": "10%"}, nil, nil, nil),
		PressureTransitionPeriod: time.Minute})
	tolerant := pod("tolerant", 0, "", "")
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	critical := pod("critical", 2000000000, "", "")

	if ok, _ := e.m.Admit(e.besteffort); !ok {
		t.Error("no pressure: BestEffort refused")
	}
	e.use(1500*mi, 0)
	e.pass(t)
	for _, tc := range []struct {
		pod  *corev1.Pod
		want bool
	}{{e.besteffort, false}, {e.guaranteed, true}, {tolerant, true}, {critical, true}} {
		ok, msg := e.m.Admit(tc.pod)
		if ok != tc.want || (!ok && msg != "The node had condition: [MemoryPressure]. ") {
			t.Errorf("MemoryPressure: %s admitted %v (%q), want %v", tc.pod.Name, ok, msg, tc.want)
		}
	}

	s := summary(2048*mi, 0, e.clock.Now())
	*s.Node.Fs.AvailableBytes = 1 << 30 // 1 %
	e.summary.set(s)
	e.clock.Step(10 * time.Second)
	e.pass(t) // MemoryPressure still within its transition period, DiskPressure too now
	if ok, msg := e.m.Admit(e.guaranteed); ok || msg != "The node had condition: [MemoryPressure DiskPressure]. " {
		t.Errorf("DiskPressure: guaranteed admitted %v (%q), want refused", ok, msg)
	}
	if ok, _ := e.m.Admit(critical); !ok {
		t.Error("DiskPressure: a critical pod refused")
	}
}

// Run waits MonitoringInterval between passes, and after an eviction polls until the pod is
// cleaned up before the next pass.
func TestRunWaitsForCleanup(t *testing.T) {
	e := newEnv(t, Config{Thresholds: mustParse(t, map[string]string{"memory.available": "1Gi"}, nil, nil, nil)})
	asked := make(chan struct{}, 10)
	e.m.cfg.PodCleanedUp = func(*corev1.Pod) bool { asked <- struct{}{}; return true }
	e.use(1500*mi, 0)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { e.m.Run(ctx); close(done) }()
	for !e.clock.HasWaiters() { // the first pass evicted and waits on its poll ticker
		time.Sleep(time.Millisecond)
	}
	e.clock.Step(time.Second)
	<-asked
	cancel()
	<-done
	if len(e.kills) != 1 {
		t.Errorf("kills %+v, want one", e.kills)
	}
}

func drain(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case ev := <-r.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

package podworkers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// recorder is a Syncer that records calls and can be told to fail or to report a terminal pod.
type recorder struct {
	mu       sync.Mutex
	calls    []string
	grace    []int64
	fail     bool
	terminal bool
	block    chan struct{} // if set, SyncPod waits on it
	called   chan string
	// failTerminating makes this many SyncTerminatingPod calls fail.
	failTerminating int
}

func newRecorder() *recorder { return &recorder{called: make(chan string, 100)} }

func (r *recorder) record(what string) {
	r.mu.Lock()
	r.calls = append(r.calls, what)
	r.mu.Unlock()
	r.called <- what
}

func (r *recorder) SyncPod(_ context.Context, t UpdateType, pod, _ *corev1.Pod, _ *kubecontainer.PodStatus) (bool, error) {
	if r.block != nil {
		<-r.block
	}
	r.record("sync:" + t.String() + ":" + pod.ResourceVersion)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return false, errors.New("injected")
	}
	return r.terminal, nil
}

func (r *recorder) SyncTerminatingPod(_ context.Context, _ *corev1.Pod, _ *kubecontainer.PodStatus, grace int64) error {
	r.mu.Lock()
	r.grace = append(r.grace, grace)
	r.mu.Unlock()
	r.record("terminating")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failTerminating > 0 {
		r.failTerminating--
		return errors.New("runtime unavailable")
	}
	return nil
}

func (r *recorder) SyncTerminatedPod(context.Context, *corev1.Pod, *kubecontainer.PodStatus) error {
	r.record("terminated")
	return nil
}

func (r *recorder) SyncTerminatingRuntimePod(_ context.Context, rp *kubecontainer.RunningPod) error {
	r.record("terminating runtime pod " + rp.Namespace + "/" + rp.Name)
	return nil
}

type nowCache struct{}

func (nowCache) GetNewerThan(_ context.Context, uid types.UID, _ time.Time) (*kubecontainer.PodStatus, error) {
	return &kubecontainer.PodStatus{ID: uid}, nil
}

func newWorkers(t *testing.T, s Syncer) (*PodWorkers, *testingclock.FakeClock) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	w, err := New(Config{Syncer: s, Cache: nowCache{}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, cancel, w)
	return w, clk
}

// run runs w until the test ends.
func run(t *testing.T, ctx context.Context, cancel context.CancelFunc, w *PodWorkers) {
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func pod(uid, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + uid, Namespace: "default", UID: types.UID(uid), ResourceVersion: rv},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30)}}
}

func expect(t *testing.T, r *recorder, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-r.called:
			if got != w {
				t.Fatalf("call %q, want %q", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no call %q", w)
		}
	}
}

func waitState(t *testing.T, w *PodWorkers, uid types.UID, want State) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, ok := w.State(uid); ok && st == want {
			return
		}
		if time.Now().After(deadline) {
			st, ok := w.State(uid)
			t.Fatalf("state %v (worker %v), want %v", st, ok, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// Upstream pod_workers: a pod is synced, then on deletion walks terminating (with the deletion
// grace period) → terminated → finished; housekeeping removes the worker once it is not desired.
func TestLifecycleSyncTerminateRemove(t *testing.T) {
	r := newRecorder()
	w, _ := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("a", "1")})
	expect(t, r, "sync:create:1")

	deleted := pod("a", "2")
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	deleted.DeletionGracePeriodSeconds = ptr.To[int64](5)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: deleted})
	expect(t, r, "terminating", "terminated")
	waitState(t, w, "a", Finished)
	if r.grace[0] != 5 {
		t.Errorf("killed with grace %d, want the deletion grace 5", r.grace[0])
	}
	// Still desired (the API object is not gone yet): the worker stays.
	_, _ = w.SyncKnownPods(map[types.UID]bool{"a": true})
	if w.Count() != 1 {
		t.Fatal("a desired finished pod lost its worker")
	}
	_, _ = w.SyncKnownPods(map[types.UID]bool{})
	if w.Count() != 0 {
		t.Errorf("%d workers after housekeeping, want 0", w.Count())
	}
}

// A pod that reaches a terminal phase (restartPolicy Never, container exited) is terminated too.
func TestTerminalPodIsTerminated(t *testing.T) {
	r := newRecorder()
	r.terminal = true
	w, _ := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("b", "1")})
	expect(t, r, "sync:create:1", "terminating", "terminated")
	waitState(t, w, "b", Finished)
}

// Housekeeping terminates a running pod that is no longer desired (deleted while we were away).
func TestNotDesiredPodIsTerminated(t *testing.T) {
	r := newRecorder()
	w, _ := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("c", "1")})
	expect(t, r, "sync:create:1")
	if states, _ := w.SyncKnownPods(map[types.UID]bool{}); states["c"] != Terminating {
		t.Errorf("state after housekeeping = %v, want terminating", states["c"])
	}
	expect(t, r, "terminating", "terminated")
	waitState(t, w, "c", Finished)
	_, _ = w.SyncKnownPods(map[types.UID]bool{})
	if w.Count() != 0 {
		t.Errorf("worker not removed")
	}
}

// Updates that arrive while the worker is busy coalesce: only the newest is synced next.
func TestUpdatesCoalesce(t *testing.T) {
	r := newRecorder()
	r.block = make(chan struct{})
	w, _ := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("d", "1")})
	deadline := time.Now().Add(10 * time.Second)
	for { // wait until the worker is inside SyncPod
		w.mu.Lock()
		working := w.pods["d"].working
		w.mu.Unlock()
		if working || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, rv := range []string{"2", "3", "4"} {
		w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: pod("d", rv)})
	}
	close(r.block)
	expect(t, r, "sync:create:1", "sync:update:4")
	select {
	case extra := <-r.called:
		t.Errorf("an extra sync ran: %s", extra)
	case <-time.After(100 * time.Millisecond):
	}
}

// Upstream work queue: after an error the pod is due again after the back-off period; after a
// success, after the resync interval.
func TestDuePodsBackoffAndResync(t *testing.T) {
	r := newRecorder()
	r.fail = true
	w, clk := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("e", "1")})
	expect(t, r, "sync:create:1")
	waitIdle(t, w, "e")
	if due := w.DuePods(); len(due) != 0 {
		t.Fatalf("due right after a failure: %v", due)
	}
	clk.Step(10 * time.Second)
	if due := w.DuePods(); len(due) != 1 {
		t.Fatalf("not due after the back-off period")
	}
	r.mu.Lock()
	r.fail = false
	r.mu.Unlock()
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, Pod: pod("e", "1")})
	expect(t, r, "sync:sync:1")
	waitIdle(t, w, "e")
	clk.Step(59 * time.Second)
	if due := w.DuePods(); len(due) != 0 {
		t.Errorf("due before the resync interval")
	}
	clk.Step(time.Second)
	if due := w.DuePods(); len(due) != 1 {
		t.Errorf("not due after the resync interval")
	}
}

func waitIdle(t *testing.T, w *PodWorkers, uid types.UID) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		st := w.pods[uid]
		idle := !st.working && st.pending == nil && !st.nextSync.IsZero()
		w.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("worker never went idle")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGracePeriodFor(t *testing.T) {
	p := pod("f", "1")
	if g := gracePeriodFor(p, nil); g != 30 {
		t.Errorf("spec grace: %d", g)
	}
	p.DeletionGracePeriodSeconds = ptr.To[int64](7)
	if g := gracePeriodFor(p, nil); g != 7 {
		t.Errorf("deletion grace: %d", g)
	}
	if g := gracePeriodFor(p, ptr.To[int64](-1)); g != 0 {
		t.Errorf("override: %d", g)
	}
	p.Spec.TerminationGracePeriodSeconds, p.DeletionGracePeriodSeconds = nil, nil
	if g := gracePeriodFor(p, nil); g != 30 {
		t.Errorf("default: %d", g)
	}
}

func TestNextState(t *testing.T) {
	running, deleting, done := pod("g", "1"), pod("g", "1"), pod("g", "1")
	deleting.DeletionTimestamp = &metav1.Time{}
	done.Status.Phase = corev1.PodSucceeded
	for _, tc := range []struct {
		cur  State
		u    UpdatePodOptions
		want State
	}{
		{Syncing, UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: running}, Syncing},
		{Syncing, UpdatePodOptions{UpdateType: SyncPodKill, Pod: running}, Terminating},
		{Syncing, UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: deleting}, Terminating},
		{Syncing, UpdatePodOptions{UpdateType: SyncPodSync, Pod: done}, Terminating},
		{Terminated, UpdatePodOptions{UpdateType: SyncPodCreate, Pod: running}, Terminated},
		{Finished, UpdatePodOptions{UpdateType: SyncPodKill, Pod: running}, Finished},
	} {
		if got := nextState(tc.cur, tc.u); got != tc.want {
			t.Errorf("nextState(%v, %v) = %v, want %v", tc.cur, tc.u.UpdateType, got, tc.want)
		}
	}
}

// Upstream requeues orphaned workers on every housekeeping: a pod that is no longer desired and
// whose termination failed is retried after the back-off, though nobody sends it updates.
func TestFailedTerminationOfRemovedPodIsRetried(t *testing.T) {
	r := newRecorder()
	r.failTerminating = 1
	w, clk := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("h", "1")})
	expect(t, r, "sync:create:1")
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: pod("h", "1")})
	expect(t, r, "terminating") // fails
	waitIdle(t, w, "h")
	w.SyncKnownPods(map[types.UID]bool{}) // too early: still backing off
	select {
	case got := <-r.called:
		t.Fatalf("retried before the back-off: %s", got)
	case <-time.After(50 * time.Millisecond):
	}
	clk.Step(10 * time.Second)
	_, _ = w.SyncKnownPods(map[types.UID]bool{})
	expect(t, r, "terminating", "terminated")
	waitState(t, w, "h", Finished)
	_, _ = w.SyncKnownPods(map[types.UID]bool{})
	if w.Count() != 0 {
		t.Errorf("worker not removed after the retried termination")
	}
}

// Upstream restartRequested: a pod created again (same UID — a static pod's manifest put back)
// while its worker is stopping it gets a new worker once the old one has finished.
func TestCreateWhileTerminatingRestarts(t *testing.T) {
	r := newRecorder()
	w, _ := newWorkers(t, r)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("s", "1")})
	expect(t, r, "sync:create:1")
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: pod("s", "1")})
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("s", "2")})
	expect(t, r, "terminating", "terminated")
	waitState(t, w, "s", Finished)
	_, restart := w.SyncKnownPods(map[types.UID]bool{"s": true})
	if len(restart) != 1 || restart[0] != "s" {
		t.Fatalf("restart = %v, want [s]", restart)
	}
	if _, ok := w.State("s"); ok {
		t.Fatal("the finished worker was kept")
	}
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("s", "2")})
	expect(t, r, "sync:create:2")
}

// The journal shows a pod's worker life in order: started, syncing, terminating (with the
// deletion grace period), terminated, done once housekeeping removes it.
func TestJournalRecordsWorkerLife(t *testing.T) {
	r := newRecorder()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	j := journal.NewWithClock(64, clock.RealClock{})
	w, err := New(Config{Syncer: r, Cache: nowCache{}, Clock: testingclock.NewFakeClock(time.Now()), Journal: j.For(journal.SourcePodWorker)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, cancel, w)

	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("j", "1")})
	expect(t, r, "sync:create:1")
	deleted := pod("j", "2")
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	deleted.DeletionGracePeriodSeconds = ptr.To[int64](5)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodUpdate, Pod: deleted})
	expect(t, r, "terminating", "terminated")
	waitState(t, w, "j", Finished)
	_, _ = w.SyncKnownPods(map[types.UID]bool{})

	var got []string
	var since uint64
	for len(got) == 0 || got[len(got)-1] != "worker done" {
		waitCtx, done := context.WithTimeout(ctx, 10*time.Second)
		page, err := j.Wait(waitCtx, since, journal.Filter{Pod: "default/p-j"})
		done()
		if err != nil {
			t.Fatalf("no worker done in the journal; got %v", got)
		}
		for _, e := range page.Events {
			if e.Source != journal.SourcePodWorker || e.UID != "j" {
				t.Errorf("event %+v: want source podworker and the pod's UID", e)
			}
			got = append(got, e.Kind)
			if e.Kind == "terminating" && e.Fields["gracePeriod"] != "5" {
				t.Errorf("terminating with fields %v, want gracePeriod 5", e.Fields)
			}
		}
		since = page.LastSeq
	}
	want := []string{"worker started", "syncing", "terminating", "terminated", "worker done"}
	if !slices.Equal(got, want) {
		t.Errorf("journal kinds %v, want %v", got, want)
	}
}

// An orphan found only in the runtime is stopped by a worker, as upstream's housekeeping hands
// it to the pod workers (SyncPodKill with RunningPod): SyncTerminatingRuntimePod, no status
// syncs, then finished, and removed by the next SyncKnownPods since nobody desires it.
func TestRuntimePodIsStoppedByItsWorker(t *testing.T) {
	r := newRecorder()
	w, _ := newWorkers(t, r)
	orphan := &kubecontainer.RunningPod{ID: "o", Name: "orphan", Namespace: "default"}
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodSync, RunningPod: orphan})
	if _, known := w.State("o"); known {
		t.Fatal("a runtime pod got a worker for a sync; only a kill may start one")
	}
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, RunningPod: orphan, GracePeriodOverride: ptr.To[int64](1)})
	expect(t, r, "terminating runtime pod default/orphan")
	waitState(t, w, "o", Finished)
	if w.CouldHaveRunningContainers("o") {
		t.Error("a stopped runtime pod could still have running containers")
	}
	if states, _ := w.SyncKnownPods(map[types.UID]bool{}); len(states) != 0 || w.Count() != 0 {
		t.Errorf("after SyncKnownPods: states %v, %d workers; want none", states, w.Count())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Equal(r.calls, []string{"terminating runtime pod default/orphan"}) {
		t.Errorf("calls %v, want only the runtime pod's termination", r.calls)
	}
}

// Pod workers made before Run hold their updates: nothing syncs until Run starts them (the
// kubelet makes them in the pod-lifecycle step and starts them in the pod-workers step).
func TestUpdatesBeforeRunWaitForRun(t *testing.T) {
	r := newRecorder()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	w, err := New(Config{Syncer: r, Cache: nowCache{}, Clock: testingclock.NewFakeClock(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("early", "1")})
	if st, known := w.State("early"); !known || st != Syncing {
		t.Fatalf("state %v, known %v before Run; want syncing", st, known)
	}
	select {
	case got := <-r.called:
		t.Fatalf("%s before Run", got)
	default:
	}
	run(t, ctx, cancel, w)
	expect(t, r, "sync:create:1")
}

// A failed sync is logged by upstream's rule (pod_workers.go): at Error level, except a sync cut
// short by cancellation (V(2)).
func TestLogSyncErrorLevels(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		stopping bool
		wantType ktesting.LogType
		wantMsg  string
	}{
		{"a failure", errors.New("CrashLoopBackOff"), false, ktesting.LogError, "Error syncing pod; will retry"},
		{"cancelled", fmt.Errorf("start container: %w", context.Canceled), false, ktesting.LogInfo, "Sync exited with context cancellation error"},
		{"the pod workers stopping", errors.New("rpc error: code = Canceled"), true, ktesting.LogInfo, "Sync exited with context cancellation error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(2), ktesting.BufferLogs(true)))
			logSyncError(logger, tc.err, time.Second, tc.stopping)
			entries := logger.GetSink().(ktesting.Underlier).GetBuffer().Data()
			if len(entries) != 1 {
				t.Fatalf("%d log entries, want 1: %v", len(entries), entries)
			}
			e := entries[0]
			if e.Type != tc.wantType || e.Message != tc.wantMsg {
				t.Errorf("logged %s %q, want %s %q", e.Type, e.Message, tc.wantType, tc.wantMsg)
			}
			if e.Type == ktesting.LogInfo && e.Verbosity != 2 {
				t.Errorf("logged at V(%d), want V(2)", e.Verbosity)
			}
		})
	}
}

// waitingSyncer's SyncPod blocks until its context ends, as SyncPod does while it waits for a
// volume that cannot be mounted.
type waitingSyncer struct {
	*recorder
	started chan struct{}
}

func (s waitingSyncer) SyncPod(ctx context.Context, _ UpdateType, _, _ *corev1.Pod, _ *kubecontainer.PodStatus) (bool, error) {
	s.started <- struct{}{}
	<-ctx.Done()
	s.record("sync cancelled")
	return false, ctx.Err()
}

// Upstream's UpdatePod cancels the running sync's context when the pod must stop
// (podSyncStatus.cancelFn): a pod deleted while SyncPod waits for its volumes stops at once.
func TestKillCancelsRunningSync(t *testing.T) {
	s := waitingSyncer{recorder: newRecorder(), started: make(chan struct{}, 1)}
	w, _ := newWorkers(t, s)
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodCreate, Pod: pod("a", "1")})
	<-s.started
	w.UpdatePod(UpdatePodOptions{UpdateType: SyncPodKill, Pod: pod("a", "2")})
	expect(t, s.recorder, "sync cancelled", "terminating", "terminated")
}

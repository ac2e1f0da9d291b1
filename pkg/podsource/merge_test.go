package podsource

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// testPod is a pod with one container; mutate tweaks it.
func testPod(uid, name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid), Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, m := range mutate {
		m(pod)
	}
	return pod
}

func uids(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, string(p.UID))
	}
	return out
}

func byUID(pods ...*corev1.Pod) map[types.UID]*corev1.Pod {
	m := map[types.UID]*corev1.Pod{}
	for _, p := range pods {
		m[p.UID] = p
	}
	return m
}

// Pins upstream podStorage.merge/checkAndUpdatePod (PodConfigNotificationIncremental): which
// operation each kind of change to a pod of a source produces.
func TestDiffPods(t *testing.T) {
	deleting := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tests := []struct {
		name                                        string
		old                                         []*corev1.Pod
		new                                         []*corev1.Pod
		adds, updates, deletes, removes, reconciles []string
	}{
		{name: "first set: every pod is an ADD", new: []*corev1.Pod{testPod("a", "a"), testPod("b", "b")}, adds: []string{"a", "b"}},
		{name: "identical set: nothing", old: []*corev1.Pod{testPod("a", "a")}, new: []*corev1.Pod{testPod("a", "a")}},
		{name: "empty set: every old pod is a REMOVE, sorted by name",
			old: []*corev1.Pod{testPod("b", "b"), testPod("a", "a")}, new: nil, removes: []string{"a", "b"}},
		{name: "same name, new UID: REMOVE old and ADD new (a static pod whose file changed)",
			old: []*corev1.Pod{testPod("a1", "a")}, new: []*corev1.Pod{testPod("a2", "a")}, adds: []string{"a2"}, removes: []string{"a1"}},
		{name: "image changed: UPDATE",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "busybox:1.37" })}, updates: []string{"a"}},
		{name: "label changed: UPDATE",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Labels["tier"] = "web" })}, updates: []string{"a"}},
		{name: "user annotation added: UPDATE",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Annotations = map[string]string{"team": "x"} })}, updates: []string{"a"}},
		{name: "only kubelet-local annotations differ (source, seen, mirror): nothing",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) {
				p.Annotations = map[string]string{ConfigSourceAnnotationKey: "api", ConfigFirstSeenAnnotationKey: "now", ConfigMirrorAnnotationKey: "h"}
			})}},
		{name: "resourceVersion and managedFields only: nothing",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.ResourceVersion = "42"; p.Generation = 2 })}},
		{name: "deletionTimestamp newly set: DELETE (graceful deletion started)",
			old:     []*corev1.Pod{testPod("a", "a")},
			new:     []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.DeletionTimestamp = &deleting; p.DeletionGracePeriodSeconds = ptr.To[int64](30) })},
			deletes: []string{"a"}},
		{name: "grace period shortened on a terminating pod: DELETE again, as upstream",
			old:     []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.DeletionTimestamp = &deleting; p.DeletionGracePeriodSeconds = ptr.To[int64](30) })},
			new:     []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.DeletionTimestamp = &deleting; p.DeletionGracePeriodSeconds = ptr.To[int64](0) })},
			deletes: []string{"a"}},
		{name: "deletionGracePeriodSeconds changed without deletionTimestamp: UPDATE",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.DeletionGracePeriodSeconds = ptr.To[int64](5) })}, updates: []string{"a"}},
		{name: "only status changed: RECONCILE",
			old: []*corev1.Pod{testPod("a", "a")},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })}, reconciles: []string{"a"}},
		{name: "spec and status changed: UPDATE only (no extra RECONCILE)",
			old:     []*corev1.Pod{testPod("a", "a")},
			new:     []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "x"; p.Status.Phase = corev1.PodRunning })},
			updates: []string{"a"}},
		{name: "nil and empty labels are the same",
			old: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Labels = nil })},
			new: []*corev1.Pod{testPod("a", "a", func(p *corev1.Pod) { p.Labels = map[string]string{} })}},
		{name: "a UID twice in the new set counts once", new: []*corev1.Pod{testPod("a", "a"), testPod("a", "a")}, adds: []string{"a"}},
		{name: "all at once",
			old: []*corev1.Pod{testPod("keep", "keep"), testPod("gone", "gone"), testPod("upd", "upd"), testPod("del", "del"), testPod("rec", "rec")},
			new: []*corev1.Pod{
				testPod("keep", "keep"),
				testPod("new", "new"),
				testPod("upd", "upd", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "x" }),
				testPod("del", "del", func(p *corev1.Pod) { p.DeletionTimestamp = &deleting }),
				testPod("rec", "rec", func(p *corev1.Pod) { p.Status.Message = "m" }),
			},
			adds: []string{"new"}, updates: []string{"upd"}, deletes: []string{"del"}, removes: []string{"gone"}, reconciles: []string{"rec"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := byUID(tc.old...)
			before := len(old)
			adds, updates, deletes, removes, reconciles := diffPods(old, tc.new)
			for _, c := range []struct {
				op        string
				got, want []string
			}{
				{"adds", uids(adds), tc.adds}, {"updates", uids(updates), tc.updates}, {"deletes", uids(deletes), tc.deletes},
				{"removes", uids(removes), tc.removes}, {"reconciles", uids(reconciles), tc.reconciles},
			} {
				if c.want == nil {
					c.want = []string{}
				}
				if len(c.got) != len(c.want) {
					t.Errorf("%s = %v, want %v", c.op, c.got, c.want)
					continue
				}
				for i := range c.got {
					if c.got[i] != c.want[i] {
						t.Errorf("%s = %v, want %v", c.op, c.got, c.want)
						break
					}
				}
			}
			if len(old) != before {
				t.Errorf("diffPods modified old")
			}
		})
	}
}

// Pins upstream PodConfig.Merge: the first set of a source with nothing in it still sends an empty
// ADD (the source is ready); the order is REMOVE, ADD, UPDATE, DELETE, RECONCILE; config.source
// is stamped and config.seen is set once and kept; duplicate names within a source are dropped.
func TestMerge(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	updates := make(chan PodUpdate, 50)
	recorder := record.NewFakeRecorder(10)
	m := newMerger(clk, recorder, updates)

	m.Merge(ctx, ApiserverSource, nil)
	if u := mustReceive(t, updates); u.Op != ADD || len(u.Pods) != 0 || u.Source != ApiserverSource {
		t.Fatalf("first empty set sent %v %s %d pods, want an empty ADD from api", u.Op, u.Source, len(u.Pods))
	}
	if !m.seenAll([]string{ApiserverSource}) || m.seenAll([]string{ApiserverSource, FileSource}) {
		t.Errorf("seenAll wrong after a set from api only")
	}

	a, b := testPod("a", "a"), testPod("b", "b")
	m.Merge(ctx, ApiserverSource, []*corev1.Pod{a, b})
	u := mustReceive(t, updates)
	if u.Op != ADD || len(u.Pods) != 2 {
		t.Fatalf("got %v with %d pods, want ADD of 2", u.Op, len(u.Pods))
	}
	seen := u.Pods[0].Annotations[ConfigFirstSeenAnnotationKey]
	if u.Pods[0].Annotations[ConfigSourceAnnotationKey] != ApiserverSource || seen != "2026-03-01T10:00:00Z" {
		t.Errorf("annotations = %v, want config.source=api and config.seen=2026-03-01T10:00:00Z", u.Pods[0].Annotations)
	}
	if a.Annotations != nil {
		t.Errorf("Merge modified the caller's pod: %v", a.Annotations)
	}
	u.Pods[0].Spec.Containers[0].Image = "changed-by-receiver"

	// An hour later: a changes status, b is deleted gracefully, c appears, d has a's name.
	clk.Step(time.Hour)
	now := metav1.NewTime(clk.Now())
	a2 := testPod("a", "a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning })
	b2 := testPod("b", "b", func(p *corev1.Pod) { p.DeletionTimestamp = &now })
	c := testPod("c", "c")
	dupe := testPod("d", "a")
	m.Merge(ctx, ApiserverSource, []*corev1.Pod{a2, b2, c, dupe})
	var ops []Op
	for range 3 {
		u := mustReceive(t, updates)
		ops = append(ops, u.Op)
		if u.Op == RECONCILE && u.Pods[0].Annotations[ConfigFirstSeenAnnotationKey] != seen {
			t.Errorf("config.seen changed to %q, want it kept at %q", u.Pods[0].Annotations[ConfigFirstSeenAnnotationKey], seen)
		}
		if u.Op == RECONCILE && u.Pods[0].Spec.Containers[0].Image != "busybox:1.36" {
			t.Errorf("the merger's copy was changed through a sent pod")
		}
	}
	if want := []Op{ADD, DELETE, RECONCILE}; ops[0] != want[0] || ops[1] != want[1] || ops[2] != want[2] {
		t.Errorf("ops = %v, want %v", ops, want)
	}
	mustBeEmpty(t, updates)
	if len(recorder.Events) != 1 {
		t.Errorf("got %d events, want one FailedValidation for the duplicate name", len(recorder.Events))
	}

	m.Merge(ctx, ApiserverSource, []*corev1.Pod{c})
	if u := mustReceive(t, updates); u.Op != REMOVE || len(u.Pods) != 2 {
		t.Errorf("got %v of %d pods, want REMOVE of a and b", u.Op, len(u.Pods))
	}
	mustBeEmpty(t, updates)
}

// mustReceive takes an update the code under test has already sent (Merge sends synchronously).
func mustReceive(t *testing.T, ch <-chan PodUpdate) PodUpdate {
	t.Helper()
	select {
	case u := <-ch:
		return u
	default:
		t.Fatal("no update was sent")
		return PodUpdate{}
	}
}

func mustBeEmpty(t *testing.T, ch <-chan PodUpdate) {
	t.Helper()
	select {
	case u := <-ch:
		t.Errorf("unexpected update %v of %v", u.Op, uids(u.Pods))
	default:
	}
}

// waitUpdate waits for the next update sent by a running source, failing after a generous
// deadline rather than hanging.
func waitUpdate(t *testing.T, ctx context.Context, ch <-chan PodUpdate) PodUpdate {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case u := <-ch:
		return u
	case <-ctx.Done():
		t.Fatal("timed out waiting for a pod update")
		return PodUpdate{}
	}
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE", REMOVE: "REMOVE", RECONCILE: "RECONCILE", Op(9): "Op(9)"} {
		if op.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(op), op.String(), want)
		}
	}
}

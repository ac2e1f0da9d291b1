package pleg

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2/ktesting"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// The Cache is what the pod workers wait on (GetNewerThan). The check sits in a test file so that
// pleg, which the pod workers read from, does not depend on podworkers outside its tests.
var _ podworkers.Cache = (*Cache)(nil)

// at is a moment of the tests' timeline, seconds after a fixed start.
func at(seconds int) time.Time {
	return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(seconds) * time.Second)
}

// answered reports whether a subscriber has been answered, without blocking.
func answered(sub *subscriber) (*cacheEntry, bool) {
	select {
	case e := <-sub.ch:
		return e, true
	default:
		return nil, false
	}
}

// Upstream cache.Get: a pod the cache does not hold has no runtime state, which is an empty
// PodStatus with the ID set and no error; a stored status or error comes back as stored.
func TestCacheGet(t *testing.T) {
	c := NewCache(nil)
	st, err := c.Get("missing")
	if err != nil || st == nil || st.ID != "missing" || len(st.Containers) != 0 || len(st.Sandboxes) != 0 {
		t.Fatalf("Get of a missing pod = %+v, %v; want an empty status with the ID", st, err)
	}

	want := &kubecontainer.PodStatus{ID: "uid-1", Name: "web"}
	c.Set("uid-1", want, nil, at(1))
	if got, err := c.Get("uid-1"); got != want || err != nil {
		t.Errorf("Get after Set = %+v, %v", got, err)
	}

	inspectErr := errors.New("runtime down")
	c.Set("uid-1", nil, inspectErr, at(2))
	if got, err := c.Get("uid-1"); got != nil || !errors.Is(err, inspectErr) {
		t.Errorf("Get after Set with an error = %+v, %v", got, err)
	}

	c.Delete("uid-1")
	if got, err := c.Get("uid-1"); err != nil || got.ID != "uid-1" || got.Name != "" {
		t.Errorf("Get after Delete = %+v, %v; want the empty status", got, err)
	}
}

// Upstream cache.getIfNewerThan: GetNewerThan answers at once when the pod's entry, or the
// global timestamp, is strictly newer than minTime; otherwise it waits.
func TestCacheGetNewerThanAnswersAtOnce(t *testing.T) {
	stored := &kubecontainer.PodStatus{ID: "uid-1", Name: "web"}
	tests := []struct {
		name       string
		entryAt    time.Time // zero: no entry
		globalAt   time.Time // zero: no relist yet
		minTime    time.Time
		wantAnswer bool
		wantStored bool // the answer is the stored entry, not an empty status
	}{
		{name: "empty cache waits", minTime: at(0)},
		{name: "entry newer", entryAt: at(2), minTime: at(1), wantAnswer: true, wantStored: true},
		{name: "entry as old as minTime waits", entryAt: at(1), minTime: at(1)},
		{name: "entry older waits", entryAt: at(0), minTime: at(1)},
		{name: "old entry, global timestamp newer", entryAt: at(0), globalAt: at(2), minTime: at(1), wantAnswer: true, wantStored: true},
		{name: "no entry, global timestamp newer: empty status", globalAt: at(2), minTime: at(1), wantAnswer: true},
		{name: "global timestamp as old as minTime waits", globalAt: at(1), minTime: at(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache(nil)
			if !tc.entryAt.IsZero() {
				c.Set("uid-1", stored, nil, tc.entryAt)
			}
			if !tc.globalAt.IsZero() {
				c.UpdateTime(tc.globalAt)
			}
			e, ok := answered(c.subscribe("uid-1", tc.minTime))
			if ok != tc.wantAnswer {
				t.Fatalf("answered = %v, want %v", ok, tc.wantAnswer)
			}
			if !ok {
				return
			}
			if tc.wantStored && e.status != stored {
				t.Errorf("answer = %+v, want the stored status", e.status)
			}
			if !tc.wantStored && (e.status.ID != "uid-1" || e.status.Name != "") {
				t.Errorf("answer = %+v, want an empty status with the ID", e.status)
			}
		})
	}
}

// Upstream cache.notify: a waiting caller is woken by a Set of its pod that is new enough, or by
// an UpdateTime that is new enough; not by older writes, and not by writes to other pods.
func TestCacheWakesSubscribers(t *testing.T) {
	c := NewCache(nil)
	sub := c.subscribe("uid-1", at(5))
	other := c.subscribe("uid-2", at(5))
	late := c.subscribe("uid-1", at(10))

	c.Set("uid-1", &kubecontainer.PodStatus{ID: "uid-1"}, nil, at(5))
	c.UpdateTime(at(5))
	if _, ok := answered(sub); ok {
		t.Fatal("woken by a Set and an UpdateTime that are not newer than minTime")
	}

	newer := &kubecontainer.PodStatus{ID: "uid-1", Name: "web"}
	c.Set("uid-1", newer, nil, at(6))
	if e, ok := answered(sub); !ok || e.status != newer {
		t.Fatalf("after a newer Set: answered %v with %+v", ok, e)
	}
	if _, ok := answered(other); ok {
		t.Fatal("a Set of uid-1 woke a caller waiting for uid-2")
	}
	if _, ok := answered(late); ok {
		t.Fatal("a Set at 6s woke a caller waiting for newer than 10s")
	}

	c.UpdateTime(at(11))
	if e, ok := answered(other); !ok || e.status.ID != "uid-2" {
		t.Errorf("after UpdateTime: answered %v with %+v; want the empty status of uid-2", ok, e)
	}
	if e, ok := answered(late); !ok || e.status != newer {
		t.Errorf("after UpdateTime: answered %v with %+v; want the stored status", ok, e)
	}
	if len(c.subscribers) != 0 {
		t.Errorf("answered subscribers are still registered: %v", c.subscribers)
	}
}

// waitSubscribed waits until n callers are blocked in GetNewerThan for uid.
func waitSubscribed(ctx context.Context, t *testing.T, c *Cache, uid types.UID, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.subscribers[uid]) == n, nil
	})
	if err != nil {
		t.Fatalf("%d callers never blocked in GetNewerThan: %v", n, err)
	}
}

type getResult struct {
	status *kubecontainer.PodStatus
	err    error
}

// testContext is a test's context with a deadline: the deadline only turns a bug that blocks
// forever into a failure; no test asserts on timing.
func testContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// await returns the result of a GetNewerThan call started with getNewerThanAsync.
func await(ctx context.Context, t *testing.T, done <-chan getResult) getResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-ctx.Done():
		t.Fatal("GetNewerThan never returned")
		return getResult{}
	}
}

func getNewerThanAsync(ctx context.Context, c *Cache, uid types.UID, minTime time.Time) <-chan getResult {
	done := make(chan getResult, 1)
	go func() {
		st, err := c.GetNewerThan(ctx, uid, minTime)
		done <- getResult{st, err}
	}()
	return done
}

// A pod worker blocked in GetNewerThan is released by PLEG's Set of its pod, and the worker of an
// unchanged pod by the UpdateTime at the end of the relist (upstream pod_workers + cache).
func TestCacheGetNewerThanBlocksUntilSetOrUpdateTime(t *testing.T) {
	ctx := testContext(t)
	c := NewCache(nil)
	changed := getNewerThanAsync(ctx, c, "changed", at(1))
	unchanged := getNewerThanAsync(ctx, c, "unchanged", at(1))
	waitSubscribed(ctx, t, c, "changed", 1)
	waitSubscribed(ctx, t, c, "unchanged", 1)

	status := &kubecontainer.PodStatus{ID: "changed", Name: "web"}
	c.Set("changed", status, nil, at(2))
	if r := await(ctx, t, changed); r.err != nil || r.status != status {
		t.Errorf("GetNewerThan of the changed pod = %+v, %v", r.status, r.err)
	}
	select {
	case r := <-unchanged:
		t.Fatalf("the unchanged pod's caller returned before UpdateTime: %+v, %v", r.status, r.err)
	default:
	}

	c.UpdateTime(at(2))
	if r := await(ctx, t, unchanged); r.err != nil || r.status.ID != "unchanged" {
		t.Errorf("GetNewerThan of the unchanged pod = %+v, %v", r.status, r.err)
	}
}

// GetNewerThan gives up with the context's error and leaves no subscriber behind.
func TestCacheGetNewerThanContextDone(t *testing.T) {
	ctx := testContext(t)

	t.Run("cancelled while waiting", func(t *testing.T) {
		c := NewCache(nil)
		waitCtx, cancel := context.WithCancel(ctx)
		done := getNewerThanAsync(waitCtx, c, "uid-1", at(1))
		waitSubscribed(ctx, t, c, "uid-1", 1)
		cancel()
		if r := await(ctx, t, done); !errors.Is(r.err, context.Canceled) || r.status != nil {
			t.Errorf("GetNewerThan = %+v, %v; want context.Canceled", r.status, r.err)
		}
		if len(c.subscribers) != 0 {
			t.Errorf("subscriber left behind: %v", c.subscribers)
		}
		// A later Set must not block on the abandoned subscriber.
		c.Set("uid-1", &kubecontainer.PodStatus{ID: "uid-1"}, nil, at(2))
	})

	t.Run("already expired", func(t *testing.T) {
		c := NewCache(nil)
		expired, cancel := context.WithDeadline(ctx, at(0))
		defer cancel()
		if _, err := c.GetNewerThan(expired, "uid-1", at(1)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("GetNewerThan = %v; want context.DeadlineExceeded", err)
		}
		if len(c.subscribers) != 0 {
			t.Errorf("subscriber left behind: %v", c.subscribers)
		}
	})
}

// With two writers (relist and the container events stream), time only moves forward: Set keeps
// a newer entry and says so (upstream cache.Set with EventedPLEG), and UpdateTime ignores an older
// global timestamp, so a relist that started before the stream's last tick cannot take it back.
func TestCacheTimestampsOnlyMoveForward(t *testing.T) {
	c := NewCache(nil)
	newer := &kubecontainer.PodStatus{ID: "uid-1", Name: "newer"}
	if !c.Set("uid-1", newer, nil, at(10)) {
		t.Fatal("Set of a new pod refused")
	}
	if c.Set("uid-1", &kubecontainer.PodStatus{ID: "uid-1", Name: "older"}, nil, at(9)) {
		t.Error("Set older than the cached entry accepted")
	}
	if st, _ := c.Get("uid-1"); st != newer {
		t.Errorf("cached %+v, want the newer status", st)
	}
	same := &kubecontainer.PodStatus{ID: "uid-1", Name: "same"}
	if !c.Set("uid-1", same, nil, at(10)) {
		t.Error("Set at the cached entry's own time refused (a relist of the same instant)")
	}

	c.UpdateTime(at(20))
	c.UpdateTime(at(15))
	sub := c.subscribe("uid-2", at(16))
	if _, ok := answered(sub); !ok {
		t.Error("the global timestamp went back from 20s to 15s")
	}
}

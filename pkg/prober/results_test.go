package prober

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Upstream results_manager.go: Set sends an Update only when the cached value changes (or is
// new); Remove forgets without an Update; a removed container's next Set is news again.
func TestResultsManagerUpdatesOnChangeOnly(t *testing.T) {
	m := NewResultsManager()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}}
	steps := []struct {
		set        Result
		remove     bool
		wantUpdate bool
	}{
		{set: Failure, wantUpdate: true}, // first value
		{set: Failure},                   // unchanged: silent
		{set: Success, wantUpdate: true}, // changed
		{remove: true},                   // Remove sends nothing
		{set: Success, wantUpdate: true}, // new again after Remove
	}
	for i, s := range steps {
		if s.remove {
			m.Remove("c://1")
			if _, ok := m.Get("c://1"); ok {
				t.Fatalf("step %d: Get after Remove found a result", i)
			}
		} else {
			m.set(context.Background(), "c://1", s.set, pod)
			if r, _ := m.Get("c://1"); r != s.set {
				t.Fatalf("step %d: Get = %v, want %v", i, r, s.set)
			}
		}
		select {
		case u := <-m.Updates():
			if !s.wantUpdate {
				t.Fatalf("step %d: unexpected update %+v", i, u)
			}
			if u != (Update{ContainerID: "c://1", Result: s.set, PodUID: "u"}) {
				t.Fatalf("step %d: update = %+v", i, u)
			}
		default: // set sends before it returns: an empty channel means no update
			if s.wantUpdate {
				t.Fatalf("step %d: no update", i)
			}
		}
	}
}

// A worker's set gives up waiting for room on a full Updates channel when its context ends (so
// workers end with the Manager); upstream's Set would block forever.
func TestResultsManagerSetGivesUpOnContextEnd(t *testing.T) {
	m := NewResultsManager()
	pod := &corev1.Pod{}
	for i := range updatesBuffer {
		m.set(context.Background(), string(rune('a'+i)), Success, pod)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if !m.set(ctx, "full", Failure, pod) {
		t.Fatal("set reported no change for a new container")
	}
	if r, _ := m.Get("full"); r != Failure {
		t.Fatalf("Get = %v, want Failure (cached even when the update is dropped)", r)
	}
}

// Result.String spells as upstream.
func TestResultString(t *testing.T) {
	for r, want := range map[Result]string{Success: "Success", Failure: "Failure", Unknown: "UNKNOWN"} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", r, got, want)
		}
	}
}

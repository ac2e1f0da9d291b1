package journal

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
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

func seqs(events []Event) []uint64 {
	out := []uint64{}
	for _, e := range events {
		out = append(out, e.Seq)
	}
	return out
}

func record(j *Journal, n int, e Event) {
	for range n {
		j.Record(e)
	}
}

// Record numbers events from 1 and stamps them with the journal's clock.
func TestRecordSetsSeqAndTime(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := testingclock.NewFakePassiveClock(start)
	j := NewWithClock(8, clk)
	j.Record(Event{Source: SourceCRI, Kind: "RunPodSandbox", Seq: 99}) // a given Seq is ignored
	clk.SetTime(start.Add(time.Second))
	j.Record(Event{Source: SourceCRI, Kind: "StartContainer"})
	got := j.Read(0, Filter{}).Events
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Fatalf("Since(0) = %+v, want seqs 1 and 2", got)
	}
	if !got[0].Time.Equal(start) || !got[1].Time.Equal(start.Add(time.Second)) {
		t.Errorf("times %v, %v; want the clock's %v and %v", got[0].Time, got[1].Time, start, start.Add(time.Second))
	}
}

// The ring keeps the newest size events: older ones are overwritten, Seqs stay contiguous, and
// Since finds its place in a wrapped ring.
func TestRingWrapsAround(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		recorded int
		since    uint64
		want     []uint64
		oldest   uint64
	}{
		{"empty", 4, 0, 0, []uint64{}, 0},
		{"not full", 4, 3, 0, []uint64{1, 2, 3}, 1},
		{"exactly full", 4, 4, 0, []uint64{1, 2, 3, 4}, 1},
		{"wrapped once", 4, 6, 0, []uint64{3, 4, 5, 6}, 3},
		{"wrapped many times", 4, 1001, 0, []uint64{998, 999, 1000, 1001}, 998},
		{"since inside the ring", 4, 6, 4, []uint64{5, 6}, 3},
		{"since before the ring: what is kept", 4, 10, 2, []uint64{7, 8, 9, 10}, 7},
		{"since the newest", 4, 6, 6, []uint64{}, 3},
		{"since ahead (restarted kubelet)", 4, 6, 1 << 63, []uint64{}, 3},
		{"size 1", 1, 5, 0, []uint64{5}, 5},
		{"grown past its first allocation, to a size that is no power of two", 100, 250, 240, []uint64{241, 242, 243, 244, 245, 246, 247, 248, 249, 250}, 151},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := NewWithClock(tt.size, clock.RealClock{})
			record(j, tt.recorded, Event{Source: SourceLease, Kind: "renew"})
			p := j.Read(tt.since, Filter{})
			if got := seqs(p.Events); !slices.Equal(got, tt.want) {
				t.Errorf("Read(%d) seqs = %v, want %v", tt.since, got, tt.want)
			}
			if p.OldestSeq != tt.oldest || p.LastSeq != uint64(tt.recorded) {
				t.Errorf("bounds = %d..%d, want %d..%d", p.OldestSeq, p.LastSeq, tt.oldest, tt.recorded)
			}
			// The ring grows as it fills, but its memory never goes past size events.
			if cap(j.ring) > tt.size {
				t.Errorf("ring capacity %d, more than its size %d", cap(j.ring), tt.size)
			}
		})
	}
}

func TestDefaultSize(t *testing.T) {
	j := NewWithClock(0, clock.RealClock{})
	record(j, DefaultSize+10, Event{Source: SourceLease, Kind: "renew"})
	if got := len(j.Read(0, Filter{}).Events); got != DefaultSize {
		t.Errorf("kept %d events, want DefaultSize %d", got, DefaultSize)
	}
}

// A filter selects by pod and source; both empty select everything.
func TestSinceFilters(t *testing.T) {
	j := NewWithClock(16, clock.RealClock{})
	j.Record(Event{Source: SourceSyncLoop, Kind: "configCh ADD", Pod: "default/web"})
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	j.Record(Event{Source: SourceCRI, Kind: "RunPodSandbox", Pod: "default/web"})
	j.Record(Event{Source: SourceCRI, Kind: "RunPodSandbox", Pod: "default/db"})
	tests := []struct {
		filter Filter
		want   []uint64
	}{
		{Filter{}, []uint64{1, 2, 3, 4}},
		{Filter{Pod: "default/web"}, []uint64{1, 3}},
		{Filter{Source: SourceCRI}, []uint64{3, 4}},
		{Filter{Pod: "default/web", Source: SourceCRI}, []uint64{3}},
		{Filter{Pod: "kube-system/web"}, []uint64{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.filter), func(t *testing.T) {
			if got := seqs(j.Read(0, tt.filter).Events); !slices.Equal(got, tt.want) {
				t.Errorf("Since(0, %+v) = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
}

// A nil journal is a valid "no journal": components record into it unconditionally.
func TestNilJournal(t *testing.T) {
	var j *Journal
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	if got := j.Read(0, Filter{}).Events; len(got) != 0 {
		t.Errorf("nil journal Since = %v, want nothing", got)
	}
	if p := j.Read(0, Filter{}); p.LastSeq != 0 || p.Events == nil {
		t.Errorf("nil journal Read = %+v, want an empty page with a non-nil slice", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Wait(ctx, 0, Filter{}); err == nil {
		t.Error("nil journal Wait returned without ctx's error")
	}
}

// Wait (the follow of `minikubelet journal --follow`) returns what is there at once, and
// otherwise sleeps until a matching event is recorded, skipping events the filter rejects.
func TestWaitFollows(t *testing.T) {
	j := NewWithClock(16, clock.RealClock{})
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	ctx := context.Background()

	p, err := j.Wait(ctx, 0, Filter{})
	if err != nil || !slices.Equal(seqs(p.Events), []uint64{1}) {
		t.Fatalf("Wait with an event kept = %v, %v; want seq 1 at once", seqs(p.Events), err)
	}

	// Whether the follower starts waiting before or after these records, it must get exactly
	// the event for its pod: the lease renewal does not end its wait.
	got := make(chan Page, 1)
	go func() {
		p, _ := j.Wait(ctx, 1, Filter{Pod: "default/web"})
		got <- p
	}()
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	j.Record(Event{Source: SourceCRI, Kind: "StartContainer", Pod: "default/web"})
	p = <-got
	if !slices.Equal(seqs(p.Events), []uint64{3}) || p.LastSeq < 3 {
		t.Errorf("follower got %v (lastSeq %d), want [3]", seqs(p.Events), p.LastSeq)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	j := NewWithClock(4, clock.RealClock{})
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		p, err := j.Wait(ctx, 1, Filter{})
		if len(p.Events) != 0 || p.LastSeq != 1 {
			err = fmt.Errorf("page %+v, want no events and lastSeq 1", p)
		}
		done <- err
	}()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Wait after cancel: %v, want context.Canceled", err)
	}
}

// A restarted kubelet's journal starts again at seq 1: a follower ahead of it must not hang.
func TestWaitAheadReturnsAtOnce(t *testing.T) {
	j := NewWithClock(4, clock.RealClock{})
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	p, err := j.Wait(context.Background(), 500, Filter{})
	if err != nil || len(p.Events) != 0 || p.LastSeq != 1 {
		t.Errorf("Wait(500) on a journal at 1 = %+v, %v; want an empty page with lastSeq 1", p, err)
	}
}

// Many recorders and followers at once: every follower sees every event exactly once, in order
// (run with -race).
func TestConcurrentRecordAndFollow(t *testing.T) {
	const recorders, perRecorder, followers = 4, 200, 3
	j := NewWithClock(recorders*perRecorder, clock.RealClock{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	seen := make([][]uint64, followers)
	for f := range followers {
		wg.Go(func() {
			var since uint64
			for since < recorders*perRecorder {
				p, err := j.Wait(ctx, since, Filter{})
				if err != nil {
					return
				}
				seen[f] = append(seen[f], seqs(p.Events)...)
				since = p.LastSeq
			}
		})
	}
	for range recorders {
		wg.Go(func() { record(j, perRecorder, Event{Source: SourcePodWorker, Kind: "syncing"}) })
	}
	wg.Wait()
	for f, got := range seen {
		if len(got) != recorders*perRecorder {
			t.Fatalf("follower %d saw %d events, want %d", f, len(got), recorders*perRecorder)
		}
		for i, s := range got {
			if s != uint64(i+1) {
				t.Fatalf("follower %d: event %d has seq %d, want %d", f, i, s, i+1)
			}
		}
	}
}

func TestText(t *testing.T) {
	e := Event{
		Seq: 42, Time: time.Date(2026, 1, 2, 10, 4, 5, 123e6, time.UTC),
		Source: SourceCRI, Kind: "StartContainer", Pod: "default/web",
		Fields: map[string]string{"id": "3f2a", "container": "app", "duration": "1.1ms"},
	}
	want := "    42 10:04:05.123  cri       StartContainer     default/web                      container=app duration=1.1ms id=3f2a"
	if got := e.Text(time.UTC); got != want {
		t.Errorf("Text:\n got %q\nwant %q", got, want)
	}
	lease := Event{Seq: 7, Time: e.Time, Source: SourceLease, Kind: "renew", Message: "failed", Fields: map[string]string{"error": "context deadline exceeded"}}
	want = "     7 10:04:05.123  lease     renew              -                                failed error=\"context deadline exceeded\""
	if got := lease.Text(time.UTC); got != want {
		t.Errorf("Text:\n got %q\nwant %q", got, want)
	}
}

func BenchmarkRecord(b *testing.B) {
	j := NewWithClock(DefaultSize, clock.RealClock{})
	e := Event{Source: SourceCRI, Kind: "StartContainer", Pod: "default/web", Fields: map[string]string{"id": "x"}}
	b.ReportAllocs()
	for b.Loop() {
		j.Record(e)
	}
}

// A Recorder stamps its source and names the pod; the zero Recorder (a component without a
// journal) records nothing and costs nothing.
func TestRecorder(t *testing.T) {
	j := NewWithClock(8, clock.RealClock{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"}}
	rec := j.For(SourcePodWorker)
	rec.Record("syncing", Pod(pod), map[string]string{"updateType": "create"})
	rec.Record("housekeeping", Pod(nil), WithError(nil, errors.New("boom")))
	var zero Recorder
	zero.Record("lost", Pod(pod), nil)
	(*Journal)(nil).For(SourceLease).Record("lost", PodRef{}, nil)

	got := j.Read(0, Filter{}).Events
	if len(got) != 2 {
		t.Fatalf("recorded %d events, want 2: %+v", len(got), got)
	}
	if e := got[0]; e.Source != SourcePodWorker || e.Kind != "syncing" || e.Pod != "default/web" || e.UID != "u1" || e.Fields["updateType"] != "create" {
		t.Errorf("first event = %+v", e)
	}
	if e := got[1]; e.Pod != "" || e.UID != "" || e.Fields["error"] != "boom" {
		t.Errorf("second event = %+v, want no pod and the error", e)
	}
	if zero.Enabled() || !rec.Enabled() {
		t.Errorf("Enabled: zero %v, real %v", zero.Enabled(), rec.Enabled())
	}
}

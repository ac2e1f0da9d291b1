package journal

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultSize is how many events a journal keeps when New is given 0: a few minutes of a busy
// node, more than an hour of an idle one.
const DefaultSize = 4096

// The sources of events. Labs filter on them: they never change.
const (
	SourceSyncLoop  = "syncloop"  // a channel of syncLoopIteration fired
	SourcePodWorker = "podworker" // a pod worker changed state, or started or ended
	SourceCRI       = "cri"       // kuberuntime made a CRI call
	SourcePLEG      = "pleg"      // a relist saw a container start, die or go
	SourceStatus    = "status"    // the status manager's versions, PATCHes and final deletes
	SourceLease     = "lease"     // a renewal of the node Lease
	SourceSecrets   = "secrets"   // the secret and configmap managers' requests and cache hits
	SourceStart     = "start"     // a step of the start order started or stopped (pkg/kubelet)
	SourceProbe     = "probe"     // a probe's result changed (pkg/prober)
	SourceEviction  = "eviction"  // pressure conditions, thresholds met, evictions, refusals (pkg/eviction)
	SourceVolume    = "volume"    // the volume manager set a volume up, tore it down, removed a pod's directory
)

// Event is one thing that happened in the kubelet. Record fills Seq and Time.
type Event struct {
	// Seq numbers events from 1 in the order they were recorded, without gaps.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Source is the component (one of the Source constants); Kind what happened in it, e.g.
	// "configCh ADD" or "StartContainer" (the package doc lists them all).
	Source string `json:"source"`
	Kind   string `json:"kind"`
	// Pod is "namespace/name" (see PodKey), or "" for events about no single pod; UID its UID.
	Pod     string `json:"pod,omitempty"`
	UID     string `json:"uid,omitempty"`
	Message string `json:"message,omitempty"`
	// Fields are details, e.g. {"id": "…", "duration": "1.2ms"}. The journal keeps the map as
	// given: a recorder must not change it afterwards, and a reader must not change it at all.
	Fields map[string]string `json:"fields,omitempty"`
}

// PodKey is how events name a pod: "namespace/name", or "" without a name.
func PodKey(namespace, name string) string {
	if name == "" {
		return ""
	}
	return namespace + "/" + name
}

// Filter selects events; an empty field matches every event.
type Filter struct {
	Pod    string // "namespace/name"
	Source string
}

// Match reports whether e passes the filter. Pure.
func (f Filter) Match(e Event) bool {
	return (f.Pod == "" || f.Pod == e.Pod) && (f.Source == "" || f.Source == e.Source)
}

// Journal is a ring of the latest events, safe for concurrent use. A nil *Journal records
// nothing, so every component works without one. Create it with New.
type Journal struct {
	clock clock.PassiveClock

	mu sync.Mutex
	// ring holds the latest events: it grows up to size (so an idle node, or each of the agents
	// of --nodes, does not hold a full ring it never fills), then the oldest is overwritten.
	// ring[(start+i)%len(ring)] is the i-th oldest event, for i < count; start is 0 until full.
	size  int
	ring  []Event
	start int
	count int
	// seq is the Seq of the newest event (0 before the first).
	seq uint64
	// changed is closed by the next Record, to wake followers (Wait); nil while nobody waits,
	// so recording costs no allocation.
	changed chan struct{}
}

// NewWithClock returns a journal that keeps the latest size events (DefaultSize if size <= 0),
// stamped by c (the kubelet's clock; tests may pass a fake one).
func NewWithClock(size int, c clock.PassiveClock) *Journal {
	if size <= 0 {
		size = DefaultSize
	}
	return &Journal{clock: c, size: size}
}

// Record appends e, setting its Seq and Time, and overwrites the oldest event when the ring is
// full. It never blocks on readers: it takes one mutex and wakes followers by closing a channel.
// It does nothing on a nil journal.
func (j *Journal) Record(e Event) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	e.Seq, e.Time = j.seq, j.clock.Now() // under the lock: Time never goes back as Seq grows
	if j.count < j.size {
		if len(j.ring) == cap(j.ring) { // grow by doubling, never past size
			grown := make([]Event, len(j.ring), min(max(2*cap(j.ring), 64), j.size))
			copy(grown, j.ring)
			j.ring = grown
		}
		j.ring = append(j.ring, e)
		j.count++
	} else {
		j.ring[j.start] = e
		j.start = (j.start + 1) % len(j.ring)
	}
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
}

// Page is one read of the journal: the events, and the journal's bounds at the same instant.
type Page struct {
	// OldestSeq is the oldest event kept (0 when empty): a reader whose last Seq is below
	// OldestSeq-1 missed events that were overwritten.
	OldestSeq uint64 `json:"oldestSeq"`
	// LastSeq is the newest event (0 when empty): pass it as seq to the next read, so events the
	// filter skipped are not looked at again. A reader whose seq is above LastSeq is reading a
	// restarted kubelet's journal and should start again from 0.
	LastSeq uint64  `json:"lastSeq"`
	Events  []Event `json:"events"`
}

// Read returns, oldest first, the kept events with Seq > seq that match f, with the journal's
// bounds taken under the same lock. Read(0, Filter{}) is everything kept. Events older than the
// ring are gone: the first Seq returned may be more than seq+1. The caller may keep the slice;
// the Fields maps are shared and read-only.
func (j *Journal) Read(seq uint64, f Filter) Page {
	if j == nil {
		return Page{Events: []Event{}}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.readLocked(seq, f)
}

func (j *Journal) readLocked(seq uint64, f Filter) Page {
	p := Page{LastSeq: j.seq, Events: []Event{}}
	if j.count == 0 {
		return p
	}
	p.OldestSeq = j.seq - uint64(j.count) + 1 // Seq of ring[start]
	if seq >= j.seq {
		return p
	}
	first := 0
	if seq >= p.OldestSeq {
		first = int(seq - p.OldestSeq + 1) // Seqs are contiguous: skip straight to seq+1
	}
	for i := first; i < j.count; i++ {
		if e := j.ring[(j.start+i)%len(j.ring)]; f.Match(e) {
			p.Events = append(p.Events, e)
		}
	}
	return p
}

// Wait is Read that blocks until there is at least one event to return or ctx ends; then it
// returns the empty page and ctx's error. It returns at once when seq is ahead of the journal
// (a restarted kubelet: see Page.LastSeq). Recorders never wait for it: Record only closes a
// channel.
func (j *Journal) Wait(ctx context.Context, seq uint64, f Filter) (Page, error) {
	if j == nil {
		<-ctx.Done()
		return Page{Events: []Event{}}, ctx.Err()
	}
	for {
		j.mu.Lock()
		p := j.readLocked(seq, f)
		if len(p.Events) > 0 || seq > j.seq {
			j.mu.Unlock()
			return p, nil
		}
		// Nothing yet: skip what we just looked at, and sleep until the next Record.
		seq = j.seq
		if j.changed == nil {
			j.changed = make(chan struct{})
		}
		changed := j.changed
		j.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			p.Events = []Event{}
			return p, ctx.Err()
		}
	}
}

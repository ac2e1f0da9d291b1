package pleg

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Cache holds the newest PodStatus the runtime reported for each pod, so pod workers read the
// runtime's state from memory instead of asking the runtime themselves. Upstream counterpart:
// pkg/kubelet/container/cache.go.
//
// Invariant: every entry, and every pod without an entry, is at least as fresh as the cache's
// global timestamp (UpdateTime). PLEG keeps it: it sets the entries of the pods that changed
// during a relist and only then moves the global timestamp to the start of that relist, so a pod
// that did not change is known to be unchanged up to that moment.
//
// Two writers (the relist and, with EventedPLEG, the container events stream) may race, so
// timestamps only move forward: Set keeps an entry newer than the one it is given, and UpdateTime
// never moves the global timestamp back (upstream: Set's EventedPLEG rule, KEP-3386 "Timestamp
// of the pod status"; its UpdateTime has no such rule, as its writers never race).
//
// All methods are safe for concurrent use. Callers must not modify a returned PodStatus.
type Cache struct {
	mu sync.Mutex
	// pods holds one entry per pod the runtime knows about.
	pods map[types.UID]*cacheEntry
	// timestamp is the global timestamp: all of the cache is at least this fresh. The zero time
	// means "no relist has finished yet".
	timestamp time.Time
	// subscribers are the GetNewerThan callers still waiting, by pod.
	subscribers map[types.UID][]*subscriber
}

// cacheEntry is what the runtime said about one pod, and when it was asked.
type cacheEntry struct {
	status *kubecontainer.PodStatus
	err    error
	// modified is the time PLEG started the relist in which it read this status: the status
	// reflects everything that happened in the runtime before this moment.
	modified time.Time
}

// subscriber is one blocked GetNewerThan call. ch has room for one entry, so notify never blocks
// even if the caller already gave up (context cancelled).
type subscriber struct {
	minTime time.Time
	ch      chan *cacheEntry
}

// NewCache returns an empty cache. It takes the kubelet's clock so the wiring passes one clock to
// every part, but it never reads it: the cache only compares the timestamps its callers give it,
// which come from PLEG's clock (upstream NewCache takes no clock at all).
func NewCache(_ clock.PassiveClock) *Cache {
	return &Cache{
		pods:        map[types.UID]*cacheEntry{},
		subscribers: map[types.UID][]*subscriber{},
	}
}

// Get returns the cached status of the pod without blocking. A pod the cache does not hold has
// no sandboxes or containers in the runtime: Get returns an empty PodStatus with only its ID set,
// and no error (as upstream).
func (c *Cache) Get(uid types.UID) (*kubecontainer.PodStatus, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entryLocked(uid)
	return e.status, e.err
}

// GetNewerThan blocks until the cache knows the pod's state strictly after minTime — its entry
// was modified after minTime, or the global timestamp is after minTime — and returns that state
// (an empty PodStatus with the ID set if the pod has no entry). It returns ctx.Err() if ctx ends
// first. Pod workers call it with the time their previous sync started, so they never act on a
// status older than what they themselves did.
func (c *Cache) GetNewerThan(ctx context.Context, uid types.UID, minTime time.Time) (*kubecontainer.PodStatus, error) {
	sub := c.subscribe(uid, minTime)
	select {
	case e := <-sub.ch:
		return e.status, e.err
	case <-ctx.Done():
		c.unsubscribe(uid, sub)
		return nil, ctx.Err()
	}
}

// Set records what the runtime said about the pod (its status, or the error that prevented
// reading it) at timestamp, and wakes the pod's waiting GetNewerThan callers for which that is
// new enough. timestamp must be taken before the runtime was asked. It returns false, and keeps
// the entry, when the cached entry is newer than timestamp: another writer read the runtime
// later.
func (c *Cache) Set(uid types.UID, status *kubecontainer.PodStatus, err error, timestamp time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pods[uid]; ok && e.modified.After(timestamp) {
		return false
	}
	c.pods[uid] = &cacheEntry{status: status, err: err, modified: timestamp}
	c.notifyLocked(uid)
	return true
}

// UpdateTime moves the global timestamp: the runtime was fully listed at timestamp (or, with
// EventedPLEG, its events stream was healthy up to then), so every pod without a newer entry is
// known to be unchanged up to then. A timestamp older than the global one is ignored. It wakes
// all waiting callers for which that is new enough.
func (c *Cache) UpdateTime(timestamp time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if timestamp.Before(c.timestamp) {
		return
	}
	c.timestamp = timestamp
	for uid := range c.subscribers {
		c.notifyLocked(uid)
	}
}

// Delete forgets the pod: the runtime no longer has any sandbox or container of it. Waiting
// callers are woken by the next UpdateTime, with an empty status.
func (c *Cache) Delete(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pods, uid)
}

// entryLocked returns the pod's entry, or an empty status for a pod the runtime does not have.
func (c *Cache) entryLocked(uid types.UID) *cacheEntry {
	if e, ok := c.pods[uid]; ok {
		return e
	}
	return &cacheEntry{status: &kubecontainer.PodStatus{ID: uid}}
}

// newerThanLocked returns the pod's entry if the cache knows its state strictly after minTime,
// and nil otherwise. It is the single rule both subscribe and notify use.
func (c *Cache) newerThanLocked(uid types.UID, minTime time.Time) *cacheEntry {
	e, ok := c.pods[uid]
	if c.timestamp.After(minTime) || (ok && e.modified.After(minTime)) {
		return c.entryLocked(uid)
	}
	return nil
}

// subscribe returns a subscriber whose channel already holds the answer if the cache is new
// enough, or registers it to be answered by a later Set or UpdateTime.
func (c *Cache) subscribe(uid types.UID, minTime time.Time) *subscriber {
	sub := &subscriber{minTime: minTime, ch: make(chan *cacheEntry, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.newerThanLocked(uid, minTime); e != nil {
		sub.ch <- e
		return sub
	}
	c.subscribers[uid] = append(c.subscribers[uid], sub)
	return sub
}

// unsubscribe removes a subscriber that stopped waiting. It is a no-op if notify already answered
// and removed it.
func (c *Cache) unsubscribe(uid types.UID, sub *subscriber) {
	c.mu.Lock()
	defer c.mu.Unlock()
	subs := c.subscribers[uid]
	for i, s := range subs {
		if s == sub {
			subs = append(subs[:i:i], subs[i+1:]...)
			break
		}
	}
	if len(subs) == 0 {
		delete(c.subscribers, uid)
	} else {
		c.subscribers[uid] = subs
	}
}

// notifyLocked answers and removes the pod's subscribers for which the cache is now new enough.
func (c *Cache) notifyLocked(uid types.UID) {
	var waiting []*subscriber
	for _, s := range c.subscribers[uid] {
		if e := c.newerThanLocked(uid, s.minTime); e != nil {
			s.ch <- e // never blocks: room for one, and each subscriber is answered once
			continue
		}
		waiting = append(waiting, s)
	}
	if len(waiting) == 0 {
		delete(c.subscribers, uid)
	} else {
		c.subscribers[uid] = waiting
	}
}

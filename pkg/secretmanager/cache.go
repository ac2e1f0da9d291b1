package secretmanager

import (
	"context"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// cacheStore is the Cache strategy: a TTL cache filled by GETs, one entry per referenced object.
// Upstream: objectStore in pkg/kubelet/util/manager/cache_based_manager.go.
//
//	AddReference ──▶ entry exists, its data reset (stale) ──▶ next Get sends a GET
//	Get: data younger than TTL ──▶ served from memory, no request
//	     data older, or an error cached ──▶ GET (resourceVersion=0 if we hold a copy) ──▶ stored
//	DeleteReference of the last pod ──▶ entry dropped
type cacheStore[T object] struct {
	kind  kind[T]
	clock clock.PassiveClock
	ttl   time.Duration

	// mu guards items and each item's refs and data pointer. It is never held during a GET.
	mu    sync.Mutex
	items map[objectKey]*cacheItem[T]
}

type cacheItem[T object] struct {
	// refs are the UIDs of the registered pods that reference the object; the reference count is
	// refs.Len(), which cannot go negative.
	refs sets.Set[types.UID]
	// data is replaced by a fresh, empty one to invalidate: a Get in flight keeps the old pointer.
	data *cacheData[T]
}

// cacheData is one fetched version. Its mutex makes concurrent Gets of one object share a GET.
type cacheData[T object] struct {
	mu        sync.Mutex
	object    T
	err       error // a cached NotFound
	fetched   bool
	fetchedAt time.Time
}

var _ objectStore[*corev1.Secret] = (*cacheStore[*corev1.Secret])(nil)

func newCacheStore[T object](k kind[T], c clock.PassiveClock, ttl time.Duration) *cacheStore[T] {
	return &cacheStore[T]{kind: k, clock: c, ttl: ttl, items: map[objectKey]*cacheItem[T]{}}
}

// AddReference counts the reference and invalidates the cached copy, so a newly registered pod
// reads fresh data (upstream: "This will trigger fetch on the next Get() operation").
func (s *cacheStore[T]) AddReference(namespace, name string, pod types.UID) {
	key := objectKey{namespace, name}
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[key]
	if !ok {
		item = &cacheItem[T]{refs: sets.New[types.UID]()}
		s.items[key] = item
	}
	item.refs.Insert(pod)
	item.data = &cacheData[T]{}
}

// DeleteReference drops the entry with its last reference.
func (s *cacheStore[T]) DeleteReference(namespace, name string, pod types.UID) {
	key := objectKey{namespace, name}
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[key]
	if !ok {
		return
	}
	item.refs.Delete(pod)
	if item.refs.Len() == 0 {
		delete(s.items, key)
	}
}

func (s *cacheStore[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	var zero T
	key := objectKey{namespace, name}
	s.mu.Lock()
	item, ok := s.items[key]
	var data *cacheData[T]
	if ok {
		data = item.data
	}
	s.mu.Unlock()
	if !ok {
		return zero, errNotRegistered(s.kind.singular, key)
	}

	data.mu.Lock()
	defer data.mu.Unlock()
	if data.fetched && data.err == nil && isFresh(data.fetchedAt, s.clock.Now(), s.ttl) {
		s.kind.note("cache hit", namespace, name)
		return data.object, nil
	}

	opts := metav1.GetOptions{}
	if data.fetched && data.err == nil {
		// We hold a copy already: the API server's watch cache may answer, which is cheaper than
		// a quorum read from etcd (upstream util.FromApiserverCache).
		opts.ResourceVersion = "0"
	}
	s.kind.note("get", namespace, name)
	obj, err := s.kind.get(ctx, namespace, name, opts)
	switch {
	case apierrors.IsNotFound(err):
		// Remember the NotFound and return it. It is not served from memory: the next Get asks
		// again (as upstream), so an object created later is seen at once.
		data.object, data.err, data.fetched, data.fetchedAt = zero, err, true, s.clock.Now()
	case err != nil:
		if !data.fetched || data.err != nil {
			return zero, err // nothing good to fall back on; do not cache transient errors
		}
		// Keep serving the copy we have; fetchedAt is unchanged, so the next Get retries.
		klog.FromContext(ctx).V(4).Info("Serving cached copy after a failed refresh", "kind", s.kind.singular, "object", klog.KRef(namespace, name), "err", err)
	case data.fetched && data.err == nil && isOlder(obj, data.object):
		// A resourceVersion=0 read may lag behind what we hold: keep ours, retry next time.
	default:
		data.object, data.err, data.fetched, data.fetchedAt = obj, nil, true, s.clock.Now()
	}
	return data.object, data.err
}

// isFresh says whether data fetched at fetchedAt may still be served at now: strictly younger
// than ttl (upstream isObjectFresh).
func isFresh(fetchedAt, now time.Time, ttl time.Duration) bool {
	return now.Before(fetchedAt.Add(ttl))
}

// isOlder says whether candidate has a lower resourceVersion than current. Resource versions are
// opaque to clients in general; the kubelet compares them as integers (etcd revisions), as
// upstream isObjectOlder does. Unparsable versions never count as older.
func isOlder(candidate, current metav1.Object) bool {
	c, err1 := strconv.ParseUint(candidate.GetResourceVersion(), 10, 64)
	h, err2 := strconv.ParseUint(current.GetResourceVersion(), 10, 64)
	return err1 == nil && err2 == nil && c < h
}

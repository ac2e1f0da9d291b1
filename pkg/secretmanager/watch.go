package secretmanager

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

const (
	// minIdleTimeout is the shortest idle window, whatever Resync says (upstream minIdleTime).
	minIdleTimeout = time.Minute
	// syncTimeout bounds how long Get waits for a new watch's first LIST before it gives up
	// (upstream polls for 1 s; the pod worker retries the pod sync either way).
	syncTimeout = 5 * time.Second
	// minWatchTimeout: upstream raises the reflector's default 5 min to avoid re-creating watches
	// too often; one watch per object adds up.
	minWatchTimeout = 30 * time.Minute
)

// idleTimeout is how long a watch outlives its last reference: 5× the resync period, at least
// 1 min (upstream NewWatchBasedManager: maxIdleTime := resyncInterval * 5).
func idleTimeout(resync time.Duration) time.Duration {
	return max(5*resync, minIdleTimeout)
}

// watchStore is the Watch strategy: one reflector per referenced object, listing and watching
// with fieldSelector metadata.name=<name> in the object's namespace. Upstream: objectCache in
// pkg/kubelet/util/manager/watch_based_manager.go.
//
//	first AddReference ──▶ item + reflector goroutine (LIST, then WATCH) ──▶ slot synced
//	more AddReferences ──▶ refs grow; still one reflector
//	Get ──▶ wait ≤ 5 s for the first sync ──▶ serve the slot (NotFound if empty)
//	    └─ object is immutable ──▶ stop the reflector, keep serving the slot
//	last DeleteReference ──▶ idle timer (5× Resync) ──▶ still unreferenced? stop reflector, drop item
//	AddReference while idle ──▶ the pending timer is void (generation moved on), watch kept
type watchStore[T object] struct {
	kind        kind[T]
	client      any // asked whether it supports WatchList semantics (the fake clientset does not)
	clock       clock.WithDelayedExecution
	idleTimeout time.Duration
	logger      klog.Logger

	// mu guards items and every item's refs, idleGen and watching. Rule: never call the clock
	// while holding mu — a FakeClock runs AfterFunc callbacks (which take mu) inside Step.
	mu    sync.Mutex
	items map[objectKey]*watchItem[T]
}

type watchItem[T object] struct {
	// refs are the UIDs of the registered pods that reference the object (count = refs.Len()).
	refs sets.Set[types.UID]
	// slot is the reflector's store; it outlives the reflector for immutable objects.
	slot *objectSlot[T]
	// stop cancels the reflector's context; watching is false once it has been called.
	stop     context.CancelFunc
	watching bool
	// idleGen changes whenever the item gains its first reference or loses its last; an idle
	// timer acts only if the generation it was armed with is still current.
	idleGen uint64
}

var _ objectStore[*corev1.Secret] = (*watchStore[*corev1.Secret])(nil)

func newWatchStore[T object](k kind[T], client any, c clock.WithDelayedExecution, idle time.Duration, logger klog.Logger) *watchStore[T] {
	return &watchStore[T]{kind: k, client: client, clock: c, idleTimeout: idle, logger: logger, items: map[objectKey]*watchItem[T]{}}
}

// AddReference starts the object's watch on its first reference; later references only count.
func (s *watchStore[T]) AddReference(namespace, name string, pod types.UID) {
	key := objectKey{namespace, name}
	s.mu.Lock()
	defer s.mu.Unlock()
	item, ok := s.items[key]
	if !ok {
		item = s.startWatch(key)
		s.items[key] = item
	}
	if item.refs.Len() == 0 {
		item.idleGen++ // referenced again: a pending idle timer must not drop it
	}
	item.refs.Insert(pod)
}

// DeleteReference arms the idle timer when the last reference goes.
func (s *watchStore[T]) DeleteReference(namespace, name string, pod types.UID) {
	key := objectKey{namespace, name}
	s.mu.Lock()
	item, ok := s.items[key]
	if !ok || !item.refs.Has(pod) {
		s.mu.Unlock()
		return
	}
	item.refs.Delete(pod)
	if item.refs.Len() > 0 {
		s.mu.Unlock()
		return
	}
	item.idleGen++
	gen := item.idleGen
	s.mu.Unlock()

	s.clock.AfterFunc(s.idleTimeout, func() { s.dropIfIdle(key, item, gen) })
}

// dropIfIdle is the idle timer's one turn: stop and forget the watch if nothing referenced the
// object since the timer was armed.
func (s *watchStore[T]) dropIfIdle(key objectKey, item *watchItem[T], gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items[key] != item || !stillIdle(item.refs.Len(), item.idleGen, gen) {
		return
	}
	delete(s.items, key)
	item.stopWatch()
	s.logger.V(4).Info("Dropped watch of unreferenced object", "kind", s.kind.singular, "object", klog.KRef(key.namespace, key.name), "idleTimeout", s.idleTimeout)
}

// stillIdle decides whether an idle timer armed at generation armedGen may drop its item.
func stillIdle(refs int, currentGen, armedGen uint64) bool {
	return refs == 0 && currentGen == armedGen
}

// Get serves the object from its watch.
func (s *watchStore[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	var zero T
	key := objectKey{namespace, name}
	s.mu.Lock()
	item, ok := s.items[key]
	registered := ok && item.refs.Len() > 0
	s.mu.Unlock()
	if !registered {
		return zero, errNotRegistered(s.kind.singular, key)
	}
	if err := s.waitForSync(ctx, item.slot); err != nil {
		return zero, fmt.Errorf("failed to sync %s cache for %q: %w", s.kind.singular, key, err)
	}
	obj, ok := item.slot.get()
	if !ok {
		return zero, apierrors.NewNotFound(s.kind.resource, name)
	}
	s.kind.note("cache hit", namespace, name)
	if s.kind.isImmutable(obj) {
		s.stopImmutable(key, item)
	}
	return obj, nil
}

// waitForSync returns once the slot holds the first LIST, or an error after syncTimeout or when
// ctx ends.
func (s *watchStore[T]) waitForSync(ctx context.Context, slot *objectSlot[T]) error {
	select {
	case <-slot.synced:
		return nil
	default:
	}
	timer := s.clock.NewTimer(syncTimeout)
	defer timer.Stop()
	select {
	case <-slot.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C():
		return fmt.Errorf("timed out after %s waiting for the first list (is the API server reachable? may this node read it?)", syncTimeout)
	}
}

// stopImmutable stops the watch of an object that can never change; the slot keeps its last
// version, served until the item is dropped (even if the object is deleted meanwhile).
func (s *watchStore[T]) stopImmutable(key objectKey, item *watchItem[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !item.watching {
		return
	}
	item.stopWatch()
	s.logger.V(4).Info("Stopped watching immutable object", "kind", s.kind.singular, "object", klog.KRef(key.namespace, key.name))
}

// startWatch creates the item and starts its reflector. It does not block: the LIST happens on
// the reflector's goroutine.
func (s *watchStore[T]) startWatch(key objectKey) *watchItem[T] {
	slot := newObjectSlot[T](key.name)
	selector := fields.OneTermEqualSelector("metadata.name", key.name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = selector
			return s.kind.list(ctx, key.namespace, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = selector
			s.kind.note("watch", key.namespace, key.name)
			return s.kind.watch(ctx, key.namespace, opts)
		},
	}
	logger := klog.LoggerWithValues(s.logger, "kind", s.kind.singular, "object", klog.KRef(key.namespace, key.name))
	reflector := cache.NewReflectorWithOptions(
		// Against a real API server the reflector may use a streaming WATCH (sendInitialEvents)
		// instead of LIST + WATCH; clients that cannot (the fake clientset) say so here.
		cache.ToListWatcherWithWatchListSemantics(lw, s.client),
		s.kind.newObject(),
		slot,
		cache.ReflectorOptions{
			Name:            fmt.Sprintf("%s-%s", s.kind.singular, key),
			Logger:          &logger,
			MinWatchTimeout: minWatchTimeout,
		},
	)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	go reflector.RunWithContext(ctx)
	logger.V(4).Info("Started watch")
	return &watchItem[T]{refs: sets.New[types.UID](), slot: slot, stop: cancel, watching: true}
}

// stopWatch cancels the reflector; the caller holds s.mu.
func (i *watchItem[T]) stopWatch() {
	if i.watching {
		i.stop()
		i.watching = false
	}
}

// objectSlot is a reflector store that holds at most one object: the one named name. Field
// selectors narrow the API server's answers to it already; the slot checks the name again
// because the fake clientset ignores field selectors. Upstream uses a whole cache.Store here and
// leaves a TODO for "a dedicated store keeping just a single item".
type objectSlot[T object] struct {
	name string
	// synced is closed by the first Replace: the reflector's initial LIST has landed.
	synced   chan struct{}
	syncOnce sync.Once

	mu      sync.Mutex
	obj     T
	present bool
}

var _ cache.ReflectorStore = (*objectSlot[*corev1.Secret])(nil)

func newObjectSlot[T object](name string) *objectSlot[T] {
	return &objectSlot[T]{name: name, synced: make(chan struct{})}
}

func (s *objectSlot[T]) get() (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.obj, s.present
}

// ours returns obj as a T if it is the watched object.
func (s *objectSlot[T]) ours(obj any) (T, bool) {
	t, ok := obj.(T)
	return t, ok && t.GetName() == s.name
}

func (s *objectSlot[T]) Add(obj any) error { return s.Update(obj) }

func (s *objectSlot[T]) Update(obj any) error {
	if t, ok := s.ours(obj); ok {
		s.mu.Lock()
		s.obj, s.present = t, true
		s.mu.Unlock()
	}
	return nil
}

func (s *objectSlot[T]) Delete(obj any) error {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if _, ok := s.ours(obj); ok {
		var zero T
		s.mu.Lock()
		s.obj, s.present = zero, false
		s.mu.Unlock()
	}
	return nil
}

func (s *objectSlot[T]) Replace(list []any, _ string) error {
	var zero T
	s.mu.Lock()
	s.obj, s.present = zero, false
	for _, obj := range list {
		if t, ok := s.ours(obj); ok {
			s.obj, s.present = t, true
		}
	}
	s.mu.Unlock()
	s.syncOnce.Do(func() { close(s.synced) })
	return nil
}

func (s *objectSlot[T]) Resync() error { return nil }

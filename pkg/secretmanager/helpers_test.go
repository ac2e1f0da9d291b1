package secretmanager

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const ns = "team-a"

// rig is one manager under test: a fake clientset, a fake clock, the Metrics hook's counts and
// every WATCH the reflectors opened.
type rig struct {
	t       *testing.T
	client  *fake.Clientset
	clock   *testingclock.FakeClock
	m       Manager
	mu      sync.Mutex
	metrics map[string]int // "secrets get" → count, from Config.Metrics
	watches chan *trackedWatch
}

func newRig(t *testing.T, cfg Config, objects ...runtime.Object) *rig {
	t.Helper()
	r := &rig{
		t:       t,
		client:  fake.NewClientset(objects...),
		clock:   testingclock.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)),
		metrics: map[string]int{},
		watches: make(chan *trackedWatch, 16),
	}
	// Hand out the tracker's watches (field selectors ignored, as the stock reactor) wrapped so
	// the test sees when a reflector opens and stops one.
	r.client.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		wa := action.(clienttesting.WatchActionImpl)
		w, err := r.client.Tracker().Watch(action.GetResource(), action.GetNamespace(), wa.ListOptions)
		if err != nil {
			return false, nil, err
		}
		tw := &trackedWatch{Interface: w, resource: action.GetResource().Resource, stopped: make(chan struct{})}
		r.watches <- tw
		return true, tw, nil
	})
	cfg.Client = r.client
	cfg.Clock = r.clock
	cfg.Metrics = func(kind, verb string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.metrics[kind+" "+verb]++
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.m = m
	t.Cleanup(r.stopWatches)
	return r
}

// requests counts the recorded actions with this verb on this resource, and checks that the
// Metrics hook saw the same number.
func (r *rig) requests(verb, resource string) int {
	r.t.Helper()
	n := 0
	for _, a := range r.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			n++
		}
	}
	r.mu.Lock()
	hooked := r.metrics[resource+" "+verb]
	r.mu.Unlock()
	if hooked != n {
		r.t.Errorf("Metrics hook counted %d %s %s, the clientset recorded %d", hooked, verb, resource, n)
	}
	return n
}

// wantRequests asserts the number of GET, LIST and WATCH requests on resource so far.
func (r *rig) wantRequests(step, resource string, get, list, watch int) {
	r.t.Helper()
	g, l, w := r.requests("get", resource), r.requests("list", resource), r.requests("watch", resource)
	if g != get || l != list || w != watch {
		r.t.Errorf("%s: %s requests get/list/watch = %d/%d/%d, want %d/%d/%d", step, resource, g, l, w, get, list, watch)
	}
}

// nextWatch returns the next WATCH a reflector opened.
func (r *rig) nextWatch(ctx context.Context) *trackedWatch {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait.ForeverTestTimeout)
	defer cancel()
	select {
	case w := <-r.watches:
		return w
	case <-ctx.Done():
		r.t.Fatal("no reflector opened a WATCH")
		return nil
	}
}

// stopWatches stops every reflector still running, so no goroutine outlives the test.
func (r *rig) stopWatches() {
	mm, ok := r.m.(*manager)
	if !ok {
		return
	}
	if s, ok := mm.secrets.(*watchStore[*corev1.Secret]); ok {
		s.stopAll()
	}
	if s, ok := mm.configMaps.(*watchStore[*corev1.ConfigMap]); ok {
		s.stopAll()
	}
}

func (s *watchStore[T]) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, item := range s.items {
		item.stopWatch()
	}
}

// watchItemFor returns the watch store's item for a secret (nil if none), for white-box checks.
func (r *rig) secretItem(name string) *watchItem[*corev1.Secret] {
	s := r.m.(*manager).secrets.(*watchStore[*corev1.Secret])
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items[objectKey{ns, name}]
}

// trackedWatch is a tracker watch whose Stop the test can wait for.
type trackedWatch struct {
	watch.Interface
	resource string
	once     sync.Once
	stopped  chan struct{}
}

func (w *trackedWatch) Stop() {
	w.Interface.Stop()
	w.once.Do(func() { close(w.stopped) })
}

func (w *trackedWatch) isStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}

func (w *trackedWatch) waitStopped(t *testing.T, ctx context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait.ForeverTestTimeout)
	defer cancel()
	select {
	case <-w.stopped:
	case <-ctx.Done():
		t.Fatalf("the %s watch was not stopped", w.resource)
	}
}

func secret(name, value string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string][]byte{"key": []byte(value)},
	}
}

func immutableSecret(name, value string) *corev1.Secret {
	s := secret(name, value)
	s.Immutable = ptr.To(true)
	return s
}

func configMap(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Data:       map[string]string{"key": value},
	}
}

// podWith returns a pod that mounts the named secrets and configmaps as volumes.
func podWith(name string, uid types.UID, secrets, configMaps []string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid}}
	for _, s := range secrets {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "s-" + s,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s}}})
	}
	for _, c := range configMaps {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "c-" + c,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: c}}}})
	}
	return pod
}

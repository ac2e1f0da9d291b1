package secretmanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Manager is what the kubelet uses to read the Secrets and ConfigMaps of the pods bound to it.
//
// Objects returned by GetSecret and GetConfigMap may be shared with the manager's cache: callers
// must not modify them (DeepCopy first), as with an informer's lister.
type Manager interface {
	// GetSecret returns the Secret namespace/name. With the Cache and Watch strategies the object
	// must be referenced by a registered pod. It may block on the network (a GET, or up to a few
	// seconds waiting for a new watch's first LIST), bounded by ctx.
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// GetConfigMap is GetSecret for ConfigMaps.
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// RegisterPod records the objects pod references (keyed by namespace, name and UID). Called
	// again for the same pod with a changed spec, it moves the references to the new names. It
	// never blocks on the network and is idempotent.
	RegisterPod(pod *corev1.Pod)
	// UnregisterPod drops the references pod (as last registered) holds. It never blocks on the
	// network and is idempotent.
	UnregisterPod(pod *corev1.Pod)
}

// Strategy is how the manager detects changes: the values of KubeletConfiguration's
// configMapAndSecretChangeDetectionStrategy (k8s.io/kubelet/config/v1beta1
// ResourceChangeDetectionStrategy).
type Strategy string

const (
	// StrategyGet sends a GET to the API server on every Get* call.
	StrategyGet Strategy = "Get"
	// StrategyCache serves Get* from a TTL cache filled by GETs.
	StrategyCache Strategy = "Cache"
	// StrategyWatch serves Get* from one watch per referenced object (the kubelet's default).
	StrategyWatch Strategy = "Watch"
)

const (
	// defaultTTL is the Cache strategy's TTL when the node carries no TTL annotation (upstream
	// defaultTTL in secret_manager.go).
	defaultTTL = time.Minute
	// defaultResync is the kubelet's syncFrequency default; the Watch strategy's idle window is 5×.
	defaultResync = time.Minute
)

// Config configures a Manager. Client is required; the rest have defaults.
type Config struct {
	// Client talks to the API server. Required.
	Client kubernetes.Interface
	// Strategy defaults to StrategyWatch, as the kubelet's.
	Strategy Strategy
	// Clock defaults to the real clock. It times the Cache strategy's TTL, the Watch strategy's
	// idle window and its wait for a first sync. It must offer AfterFunc
	// (clock.WithDelayedExecution, which clock.RealClock and testing.FakeClock do): the Watch
	// strategy arms one timer when an object loses its last reference instead of running a
	// sweeping loop, so the manager owns no goroutine of its own. The reflectors' own timing
	// (backoff, watch timeouts) stays on client-go's real clock.
	Clock clock.WithDelayedExecution
	// TTL is the Cache strategy's time to live, default 1 min.
	TTL time.Duration
	// Resync is the kubelet's syncFrequency, default 1 min. The Watch strategy drops the watch of
	// an object no pod references after 5× Resync (at least 1 min): upstream's maxIdleTime, applied
	// to unreferenced objects (see the package doc).
	Resync time.Duration
	// Metrics, if set, is called once for every request the manager sends: kind is "secrets" or
	// "configmaps", verb is "get", "list" or "watch". It must not block.
	Metrics func(kind, verb string)
	// Journal, if set, records each GET and WATCH sent for an object, and each Get served from
	// memory (a cache hit of the Cache or Watch strategy).
	Journal journal.Recorder
}

// objectStore holds the objects of one kind for one strategy. There is one implementation per
// strategy (getStore, cacheStore, watchStore), each generic over the kind, so Secrets and
// ConfigMaps share the code. Upstream: the Store interface in pkg/kubelet/util/manager/manager.go.
type objectStore[T object] interface {
	// AddReference records that the pod with UID pod references namespace/name. Never blocks on
	// the network. Adding the same reference twice counts once.
	AddReference(namespace, name string, pod types.UID)
	// DeleteReference drops that reference; a reference that is not held is ignored, so counts
	// never go negative. Never blocks on the network.
	DeleteReference(namespace, name string, pod types.UID)
	// Get returns the object; it may block on the network, bounded by ctx.
	Get(ctx context.Context, namespace, name string) (T, error)
}

// New validates cfg, fills its defaults and returns the Manager for cfg.Strategy.
func New(cfg Config) (Manager, error) {
	if cfg.Client == nil {
		return nil, errors.New("secretmanager: Config.Client is required")
	}
	if cfg.Strategy == "" {
		cfg.Strategy = StrategyWatch
	}
	if cfg.TTL < 0 || cfg.Resync < 0 {
		return nil, fmt.Errorf("secretmanager: TTL (%s) and Resync (%s) must not be negative", cfg.TTL, cfg.Resync)
	}
	if cfg.TTL == 0 {
		cfg.TTL = defaultTTL
	}
	if cfg.Resync == 0 {
		cfg.Resync = defaultResync
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	metrics := cfg.Metrics
	if metrics == nil {
		metrics = func(string, string) {}
	}
	secrets := secretKind(cfg.Client, func(verb string) { metrics("secrets", verb) })
	configMaps := configMapKind(cfg.Client, func(verb string) { metrics("configmaps", verb) })
	secrets.journal, configMaps.journal = cfg.Journal, cfg.Journal
	logger := klog.Background().WithName("secretmanager")

	m := &manager{strategy: cfg.Strategy, logger: logger, pods: map[podKey]*corev1.Pod{}}
	switch cfg.Strategy {
	case StrategyGet:
		m.secrets = getStore[*corev1.Secret]{kind: secrets}
		m.configMaps = getStore[*corev1.ConfigMap]{kind: configMaps}
	case StrategyCache:
		m.secrets = newCacheStore(secrets, cfg.Clock, cfg.TTL)
		m.configMaps = newCacheStore(configMaps, cfg.Clock, cfg.TTL)
	case StrategyWatch:
		idle := idleTimeout(cfg.Resync)
		m.secrets = newWatchStore(secrets, cfg.Client, cfg.Clock, idle, logger)
		m.configMaps = newWatchStore(configMaps, cfg.Client, cfg.Clock, idle, logger)
	default:
		return nil, fmt.Errorf("secretmanager: unknown strategy %q: use %q, %q or %q (configMapAndSecretChangeDetectionStrategy)",
			cfg.Strategy, StrategyGet, StrategyCache, StrategyWatch)
	}
	return m, nil
}

// podKey identifies one registered pod, as upstream's objectKey: a pod deleted and re-created with
// the same name is a different pod.
type podKey struct {
	namespace, name string
	uid             types.UID
}

func keyOf(pod *corev1.Pod) podKey {
	return podKey{namespace: pod.Namespace, name: pod.Name, uid: pod.UID}
}

// manager keeps the registered pods and turns Register/Unregister into reference changes on the
// two stores. Upstream: cacheBasedManager in pkg/kubelet/util/manager/cache_based_manager.go,
// one per kind; ours serves both kinds.
type manager struct {
	strategy   Strategy
	secrets    objectStore[*corev1.Secret]
	configMaps objectStore[*corev1.ConfigMap]
	logger     klog.Logger

	// mu serialises Register/Unregister so a pod's references move atomically.
	mu sync.Mutex
	// pods is the last registered version of each pod: its references are what we hold.
	pods map[podKey]*corev1.Pod
}

var _ Manager = (*manager)(nil)

func (m *manager) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return m.secrets.Get(ctx, namespace, name)
}

func (m *manager) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return m.configMaps.Get(ctx, namespace, name)
}

func (m *manager) RegisterPod(pod *corev1.Pod) {
	if m.strategy == StrategyGet {
		return // nothing to track: every Get goes to the API server (upstream simpleSecretManager)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := keyOf(pod)
	prev := m.pods[key]
	m.pods[key] = pod

	var prevSecrets, prevConfigMaps sets.Set[string]
	if prev != nil {
		prevSecrets, prevConfigMaps = SecretNames(prev), ConfigMapNames(prev)
	}
	addS, delS := referenceChanges(prevSecrets, SecretNames(pod))
	addC, delC := referenceChanges(prevConfigMaps, ConfigMapNames(pod))
	applyChanges(m.secrets, pod, addS, delS)
	applyChanges(m.configMaps, pod, addC, delC)
	if logger := m.logger.V(4); logger.Enabled() {
		logger.Info("Registered pod references", "pod", klog.KObj(pod), "podUID", pod.UID,
			"addedSecrets", sets.List(addS), "droppedSecrets", sets.List(delS),
			"addedConfigMaps", sets.List(addC), "droppedConfigMaps", sets.List(delC))
	}
}

func (m *manager) UnregisterPod(pod *corev1.Pod) {
	if m.strategy == StrategyGet {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := keyOf(pod)
	prev := m.pods[key]
	if prev == nil {
		return // never registered, or already unregistered
	}
	delete(m.pods, key)
	// Drop what the registered version referenced: pod may be a later version whose spec differs.
	applyChanges(m.secrets, prev, nil, SecretNames(prev))
	applyChanges(m.configMaps, prev, nil, ConfigMapNames(prev))
	m.logger.V(4).Info("Unregistered pod references", "pod", klog.KObj(prev), "podUID", prev.UID)
}

// referenceChanges decides which references a (re-)registration adds and which it drops: on the
// first registration (prev == nil) every name is added; afterwards only the difference moves.
// Names referenced by both versions are untouched, so their count never dips to zero, and — as
// upstream, "to minimize unnecessary API requests" — the Cache strategy does not invalidate them.
func referenceChanges(prev, next sets.Set[string]) (add, drop sets.Set[string]) {
	if prev == nil {
		return next, sets.New[string]()
	}
	return next.Difference(prev), prev.Difference(next)
}

// applyChanges adds before it drops, so a store never sees a transient zero for this pod's names.
func applyChanges[T object](store objectStore[T], pod *corev1.Pod, add, drop sets.Set[string]) {
	for name := range add {
		store.AddReference(pod.Namespace, name, pod.UID)
	}
	for name := range drop {
		store.DeleteReference(pod.Namespace, name, pod.UID)
	}
}

// objectKey names one object of one kind.
type objectKey struct {
	namespace, name string
}

func (k objectKey) String() string { return k.namespace + "/" + k.name }

// errNotRegistered is returned by the Cache and Watch strategies for an object no registered pod
// references.
func errNotRegistered(singular string, key objectKey) error {
	return fmt.Errorf("%s %q not registered: no registered pod references it (call RegisterPod with the pod first)", singular, key)
}

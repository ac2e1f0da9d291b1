package token

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// maxTokenAge is the oldest a cached token may be, whatever its TTL (upstream maxTTL).
const maxTokenAge = 24 * time.Hour

// Config configures a Manager.
type Config struct {
	// Client requests the tokens: the kubelet's main client, as system:node:<name>. Required.
	Client kubernetes.Interface
	// Clock says when a cached token is due for refresh or has expired, and paces the retries
	// for a pod the API server does not see yet. nil means the real clock.
	Clock clock.Clock
}

// Manager requests, caches and refreshes service account tokens for the pods of this node.
// Its methods may be called concurrently.
type Manager struct {
	cfg Config

	mu    sync.Mutex
	cache map[cacheKey]*authenticationv1.TokenRequest
}

// cacheKey is what makes two requests ask for the same token. It holds no secret and may be logged.
type cacheKey struct {
	namespace, serviceAccount string
	audiences                 string // the audiences, quoted and joined: ["a","b"] ≠ ["a,b"]
	expirationSeconds         int64  // 0: the API server's default
	podName                   string
	podUID                    types.UID
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil {
		return nil, errors.New("token: Client is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, cache: map[cacheKey]*authenticationv1.TokenRequest{}}, nil
}

// GetServiceAccountToken returns a token of service account namespace/name for tr's audiences,
// lifetime and bound object: the cached one while it needs no refresh, else a new one from the
// TokenRequest API (POST serviceaccounts/<name>/token). When the request fails, a cached token
// that has not expired yet is returned (and the failure logged); otherwise the error.
//
// It blocks on the API server when it requests a token. The caller must not modify tr or the
// returned object; Status.Token is a credential: never log it.
func (m *Manager) GetServiceAccountToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	logger := klog.FromContext(ctx)
	key := keyFor(namespace, name, tr)
	now := m.cfg.Clock.Now()

	m.mu.Lock()
	cached := m.cache[key]
	m.mu.Unlock()
	if cached != nil && !requiresRefresh(cached, now) {
		return cached, nil
	}

	fresh, err := m.requestToken(ctx, namespace, name, tr)
	if err != nil {
		err = fmt.Errorf("request a token for service account %s/%s bound to pod %q: %w", namespace, name, key.podName, err)
		if cached == nil || expired(cached, now) {
			return nil, err
		}
		logger.Error(err, "Could not refresh a service account token, using the cached one until it expires",
			"serviceAccount", klog.KRef(namespace, name), "pod", klog.KRef(namespace, key.podName),
			"expirationTimestamp", cached.Status.ExpirationTimestamp.Time)
		return cached, nil
	}
	m.mu.Lock()
	m.cache[key] = fresh
	m.mu.Unlock()
	logger.V(2).Info("Requested a service account token", "serviceAccount", klog.KRef(namespace, name),
		"pod", klog.KRef(namespace, key.podName), "podUID", key.podUID, "audiences", tr.Spec.Audiences,
		"refreshed", cached != nil, "expirationTimestamp", fresh.Status.ExpirationTimestamp.Time)
	return fresh, nil
}

// notFoundRetries is how long requestToken waits, and how many times, for a pod the API server
// does not see yet: 250 ms doubling, about 4 s in all.
var notFoundRetries = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}

// requestToken sends the TokenRequest. The API server checks the bound pod in its watch cache,
// which may not have a pod created a moment ago ("pod … not found"): that answer is retried a few
// times within seconds, as upstream's volume manager retries a mount every 500 ms, instead of
// leaving the pod to the pod worker's 10 s back-off.
func (m *Manager) requestToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	for attempt := 0; ; attempt++ {
		fresh, err := m.cfg.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
		if err == nil || !apierrors.IsNotFound(err) || attempt == len(notFoundRetries) {
			return fresh, err
		}
		select {
		case <-m.cfg.Clock.After(notFoundRetries[attempt]):
		case <-ctx.Done():
			return nil, err
		}
	}
}

// CleanupPods forgets the tokens of pods not in keep (upstream: DeleteServiceAccountToken, which
// the projected volume's TearDown calls for one pod), and every token that has expired.
// Housekeeping calls it.
func (m *Manager) CleanupPods(keep map[types.UID]bool) {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, tr := range m.cache {
		if !keep[key.podUID] || expired(tr, now) {
			delete(m.cache, key)
		}
	}
}

func keyFor(namespace, name string, tr *authenticationv1.TokenRequest) cacheKey {
	key := cacheKey{namespace: namespace, serviceAccount: name, audiences: fmt.Sprintf("%q", tr.Spec.Audiences)}
	if tr.Spec.ExpirationSeconds != nil {
		key.expirationSeconds = *tr.Spec.ExpirationSeconds
	}
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		key.podName, key.podUID = ref.Name, ref.UID
	}
	return key
}

// requiresRefresh is upstream's rule: a token older than 80 % of its TTL, or older than 24 h,
// is requested again. The TTL is the response's spec.expirationSeconds (the API server fills
// it); without it the token is only replaced once it has expired.
func requiresRefresh(tr *authenticationv1.TokenRequest, now time.Time) bool {
	exp := tr.Status.ExpirationTimestamp.Time
	if tr.Spec.ExpirationSeconds == nil {
		return !now.Before(exp)
	}
	ttl := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	issued := exp.Add(-ttl)
	return now.After(issued.Add(maxTokenAge)) || now.After(issued.Add(ttl*8/10))
}

// expired reports whether the token is no longer valid at now.
func expired(tr *authenticationv1.TokenRequest, now time.Time) bool {
	return !now.Before(tr.Status.ExpirationTimestamp.Time)
}

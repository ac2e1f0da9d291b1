package prober

// The results cache of one probe kind and its channel of changes (upstream:
// pkg/kubelet/prober/results/results_manager.go).

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// updatesBuffer is how many changes wait for the syncLoop before a worker blocks, as upstream.
const updatesBuffer = 20

// Result is what the kubelet keeps of a probe: the outcome after the thresholds, not of one run.
type Result int

// The results, numbered as upstream's results.Result.
const (
	Unknown Result = iota - 1 // startup before its first verdict
	Success
	Failure
)

// String gives upstream's spelling: "Success", "Failure", "UNKNOWN".
func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	default:
		return "UNKNOWN"
	}
}

// Update says that a container's result changed. The syncLoop receives it from Updates.
type Update struct {
	// ContainerID is the API form, "<runtime>://<id>", as in corev1.ContainerStatus.ContainerID.
	ContainerID string
	Result      Result
	PodUID      types.UID
}

// ResultsManager caches the result of one probe kind per container and announces each change.
// There is one per kind (liveness, readiness, startup); the kubelet reads them (kuberuntime: kill
// a container whose liveness is Failure; the status manager: Ready and Started). Safe for
// concurrent use. Create it with NewResultsManager.
type ResultsManager struct {
	mu    sync.RWMutex
	cache map[string]Result // container ID (API form) → result

	updates chan Update
}

// NewResultsManager returns an empty cache whose Updates channel holds 20 changes.
func NewResultsManager() *ResultsManager {
	return &ResultsManager{cache: map[string]Result{}, updates: make(chan Update, updatesBuffer)}
}

// Get returns the cached result of the container, and false when there is none. It never blocks.
func (m *ResultsManager) Get(containerID string) (Result, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.cache[containerID]
	return r, ok
}

// set caches r for the container and, when that changes the cached value (or there was none),
// sends an Update with pod's UID, waiting while the Updates channel is full — someone must read
// it — until ctx ends (the cache is updated anyway). It reports whether the value changed.
// Upstream's Set is the same without ctx: it blocks for as long as the channel stays full. The
// probe workers call set with their context, so they end with the Manager.
func (m *ResultsManager) set(ctx context.Context, containerID string, r Result, pod *corev1.Pod) bool {
	if !m.store(containerID, r) {
		return false
	}
	select {
	case m.updates <- Update{ContainerID: containerID, Result: r, PodUID: pod.UID}:
	case <-ctx.Done():
	}
	return true
}

// store caches r and reports whether that changed anything; the lock is not held while sending.
func (m *ResultsManager) store(containerID string, r Result) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.cache[containerID]; ok && old == r {
		return false
	}
	m.cache[containerID] = r
	return true
}

// Remove forgets the container's result. No Update is sent.
func (m *ResultsManager) Remove(containerID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cache, containerID)
}

// Updates is the channel of changes. There is one channel per manager: a single reader (the
// syncLoop) is expected, as upstream.
func (m *ResultsManager) Updates() <-chan Update { return m.updates }

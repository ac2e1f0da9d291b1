package eviction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/qos"
)

const (
	// immediateGracePeriod is the grace period of a pod evicted for a hard threshold or for its
	// own storage limits (upstream immediateEvictionGracePeriodSeconds).
	immediateGracePeriod = 1
	// podCleanupTimeout and podCleanupPollPeriod: after an eviction the manager waits (polling)
	// for the pod to be cleaned up, at most this long, before its next pass (upstream).
	podCleanupTimeout    = 30 * time.Second
	podCleanupPollPeriod = time.Second
)

// Config configures the eviction manager.
type Config struct {
	// Summary gives the node's and pods' stats. Required.
	Summary SummaryProvider
	// Thresholds are evictionHard and evictionSoft (ParseThresholds).
	Thresholds []Threshold
	// PressureTransitionPeriod is how long a pressure condition stays True after its threshold
	// was last met (evictionPressureTransitionPeriod).
	PressureTransitionPeriod time.Duration
	// MaxPodGracePeriodSeconds caps the grace period of a pod evicted for a soft threshold
	// (evictionMaxPodGracePeriod).
	MaxPodGracePeriodSeconds int64
	// LocalStorageCapacityIsolation evicts pods over their own local storage limits
	// (localStorageCapacityIsolation).
	LocalStorageCapacityIsolation bool
	// ActivePods lists the pods that may be evicted: admitted, not yet terminated. Required.
	ActivePods func() []*corev1.Pod
	// KillPod stops an evicted pod and gives it its status. Required.
	KillPod KillPodFunc
	// PodCleanedUp reports whether an evicted pod has released what it held. Required.
	PodCleanedUp func(*corev1.Pod) bool
	// Recorder records the Evicted and EvictionThresholdMet Events; NodeRef is the node's. Required.
	Recorder record.EventRecorder
	NodeRef  *corev1.ObjectReference
	// MonitoringInterval is the time between passes (upstream 10 s).
	MonitoringInterval time.Duration
	// OnEviction, if set, observes each eviction by signal (the kubelet_evictions metric).
	OnEviction func(signal string)
	// Journal records pressure changes, evictions and rejections (source "eviction").
	Journal journal.Recorder
	Clock   clock.WithTicker
}

// Manager watches the signals, reports the pressure conditions, evicts pods and refuses pods
// under pressure. Make it with New, run it with Run.
type Manager struct {
	cfg Config

	mu         sync.RWMutex
	conditions []corev1.NodeConditionType // the node's pressure conditions, read by the node status and Admit

	// Owned by the loop (synchronize).
	firstObserved    map[key]time.Time                      // when each threshold met now was first met
	lastObserved     map[corev1.NodeConditionType]time.Time // when each condition's threshold was last met
	thresholdsMet    []Threshold                            // past their grace period, not yet resolved
	lastObservations observations                           // the previous pass's signals
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Manager, error) {
	if cfg.Summary == nil || cfg.ActivePods == nil || cfg.KillPod == nil || cfg.PodCleanedUp == nil || cfg.Recorder == nil || cfg.NodeRef == nil {
		return nil, errors.New("eviction: Summary, ActivePods, KillPod, PodCleanedUp, Recorder and NodeRef are required")
	}
	if cfg.PressureTransitionPeriod < 0 {
		return nil, fmt.Errorf("eviction: PressureTransitionPeriod must not be negative, got %s", cfg.PressureTransitionPeriod)
	}
	if cfg.MonitoringInterval == 0 {
		cfg.MonitoringInterval = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, firstObserved: map[key]time.Time{}, lastObserved: map[corev1.NodeConditionType]time.Time{}}, nil
}

// Run runs a pass every MonitoringInterval until ctx ends; after an eviction it waits for the
// pod to be cleaned up (at most 30 s) instead, then runs the next pass at once (upstream Start).
func (m *Manager) Run(ctx context.Context) {
	klog.FromContext(ctx).Info("Eviction manager: starting control loop", "thresholds", len(m.cfg.Thresholds))
	for ctx.Err() == nil {
		if evicted := m.synchronize(ctx); len(evicted) > 0 {
			m.waitForPodsCleanup(ctx, evicted)
			continue
		}
		select {
		case <-ctx.Done():
		case <-m.cfg.Clock.After(m.cfg.MonitoringInterval):
		}
	}
}

// synchronize is one pass (upstream synchronize): observe the signals, update the pressure
// conditions, evict pods over their own storage limits, else evict at most one pod for the
// first threshold whose grace period has passed. It returns the evicted pods.
func (m *Manager) synchronize(ctx context.Context) []*corev1.Pod {
	logger := klog.FromContext(ctx)
	if len(m.cfg.Thresholds) == 0 && !m.cfg.LocalStorageCapacityIsolation {
		return nil
	}
	active := m.cfg.ActivePods()
	summary, err := m.cfg.Summary.Summary(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to get summary stats")
		return nil
	}
	obs, stats := makeObservations(summary), statsByUID(summary.Pods)

	// Thresholds met now, and those met before that have not reclaimed their minimum yet.
	met := thresholdsMet(m.cfg.Thresholds, obs, false)
	if len(m.thresholdsMet) > 0 {
		met = mergeThresholds(met, thresholdsMet(m.thresholdsMet, obs, true))
	}
	now := m.cfg.Clock.Now()
	m.firstObserved = firstObservedAt(met, m.firstObserved, now)
	m.lastObserved = conditionsLastObservedAt(nodeConditionsOf(met), m.lastObserved, now)
	m.setConditions(conditionsObservedSince(m.lastObserved, m.cfg.PressureTransitionPeriod, now))
	m.thresholdsMet = metGracePeriod(met, m.firstObserved, now)
	act := reclaimOrder(updatedStats(m.thresholdsMet, obs, m.lastObservations))
	m.lastObservations = obs

	if m.cfg.LocalStorageCapacityIsolation {
		if evicted := m.localStorageEviction(ctx, active, stats); len(evicted) > 0 {
			return evicted
		}
	}
	if len(act) == 0 {
		logger.V(3).Info("Eviction manager: no resources are starved")
		return nil
	}
	t := act[0]
	r := signalResource[t.Signal]
	o := obs[t.Signal]
	logger.Info("Eviction manager: attempting to reclaim", "resourceName", r, "signal", t.Signal,
		"threshold", thresholdQuantity(t, o.capacity), "available", quantity(t.Signal, o.available))
	m.cfg.Journal.Record("threshold met", journal.PodRef{}, map[string]string{"signal": string(t.Signal),
		"threshold": thresholdQuantity(t, o.capacity), "available": quantity(t.Signal, o.available), "gracePeriod": t.GracePeriod.String()})
	m.cfg.Recorder.Eventf(m.cfg.NodeRef, corev1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", r)
	if len(active) == 0 {
		logger.Error(nil, "Eviction manager: eviction thresholds have been met, but no pods are active to evict")
		return nil
	}
	pods := append([]*corev1.Pod(nil), active...)
	rankFor(t.Signal)(pods, stats)
	logger.Info("Eviction manager: pods ranked for eviction", "pods", klog.KObjSlice(pods))
	for _, pod := range pods { // at most one pod per pass
		grace := int64(immediateGracePeriod)
		if !t.hard() {
			grace = softGracePeriod(pod, m.cfg.MaxPodGracePeriodSeconds)
		}
		msg := evictionMessage(r, pod, stats, act, obs)
		condition := &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: pod.Generation,
			Reason: corev1.PodReasonTerminationByKubelet, Message: msg}
		if m.evictPod(ctx, pod, grace, string(t.Signal), Eviction{Message: msg, Condition: condition}) {
			return []*corev1.Pod{pod}
		}
	}
	logger.Info("Eviction manager: unable to evict any pods from the node")
	return nil
}

// softGracePeriod is the grace period of a pod evicted for a soft threshold: the smaller of
// evictionMaxPodGracePeriod and the pod's terminationGracePeriodSeconds (upstream).
func softGracePeriod(pod *corev1.Pod, maxGrace int64) int64 {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return min(maxGrace, *pod.Spec.TerminationGracePeriodSeconds)
	}
	return maxGrace
}

// localStorageEviction evicts every pod over one of its own local storage limits.
func (m *Manager) localStorageEviction(ctx context.Context, pods []*corev1.Pod, stats podStats) []*corev1.Pod {
	var evicted []*corev1.Pod
	for _, pod := range pods {
		s, ok := stats(pod)
		if !ok {
			continue
		}
		if signal, msg := storageLimitExceeded(pod, s); msg != "" && m.evictPod(ctx, pod, immediateGracePeriod, signal, Eviction{Message: msg}) {
			evicted = append(evicted, pod)
		}
	}
	return evicted
}

// evictPod evicts pod unless it is critical: a Warning Event "Evicted", then KillPod (upstream
// evictPod). It reports whether the pod was evicted.
func (m *Manager) evictPod(ctx context.Context, pod *corev1.Pod, grace int64, signal string, e Eviction) bool {
	logger := klog.FromContext(ctx)
	if qos.IsCriticalPod(pod) {
		logger.Error(nil, "Eviction manager: cannot evict a critical pod", "pod", klog.KObj(pod))
		return false
	}
	m.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, Reason, "%s", e.Message)
	m.cfg.Journal.Record("evict", journal.Pod(pod), map[string]string{"signal": signal, "gracePeriod": strconv.FormatInt(grace, 10), "message": e.Message})
	if err := m.cfg.KillPod(pod, grace, e); err != nil {
		logger.Error(err, "Eviction manager: pod failed to evict", "pod", klog.KObj(pod))
	} else {
		logger.Info("Eviction manager: pod is evicted successfully", "pod", klog.KObj(pod), "signal", signal)
	}
	if m.cfg.OnEviction != nil {
		m.cfg.OnEviction(signal)
	}
	return true
}

// waitForPodsCleanup polls every second until every evicted pod is cleaned up, for at most 30 s.
func (m *Manager) waitForPodsCleanup(ctx context.Context, pods []*corev1.Pod) {
	logger := klog.FromContext(ctx)
	timeout := m.cfg.Clock.NewTimer(podCleanupTimeout)
	defer timeout.Stop()
	ticker := m.cfg.Clock.NewTicker(podCleanupPollPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timeout.C():
			logger.Info("Eviction manager: timed out waiting for pods to be cleaned up", "pods", klog.KObjSlice(pods))
			return
		case <-ticker.C():
			done := true
			for _, pod := range pods {
				done = done && m.cfg.PodCleanedUp(pod)
			}
			if done {
				logger.Info("Eviction manager: pods successfully cleaned up", "pods", klog.KObjSlice(pods))
				return
			}
		}
	}
}

// setConditions publishes the pressure conditions and records a change in the journal.
func (m *Manager) setConditions(conds []corev1.NodeConditionType) {
	m.mu.Lock()
	old := m.conditions
	m.conditions = conds
	m.mu.Unlock()
	if conditionNames(old) != conditionNames(conds) {
		m.cfg.Journal.Record("pressure", journal.PodRef{}, map[string]string{"conditions": conditionNames(conds)})
	}
}

// IsUnder reports whether the node has the pressure condition c (MemoryPressure, DiskPressure
// or PIDPressure) now: the node status reads it. Safe from any goroutine.
func (m *Manager) IsUnder(c corev1.NodeConditionType) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Contains(m.conditions, c)
}

// Admit decides whether the node under pressure runs pod (upstream managerImpl.Admit): without
// pressure, or for a critical pod, yes; under MemoryPressure alone, yes unless the pod is
// BestEffort and does not tolerate the memory-pressure taint; under any other pressure, no. A
// refusal's message is "The node had condition: [MemoryPressure]. ".
func (m *Manager) Admit(pod *corev1.Pod) (bool, string) {
	m.mu.RLock()
	conds := m.conditions
	m.mu.RUnlock()
	if len(conds) == 0 || qos.IsCriticalPod(pod) {
		return true, ""
	}
	if len(conds) == 1 && conds[0] == corev1.NodeMemoryPressure {
		if qos.GetPodQOS(pod) != corev1.PodQOSBestEffort || toleratesMemoryPressure(pod) {
			return true, ""
		}
	}
	msg := fmt.Sprintf(nodeConditionMessageFmt, conds)
	m.cfg.Journal.Record("reject", journal.Pod(pod), map[string]string{"conditions": conditionNames(conds)})
	return false, msg
}

func toleratesMemoryPressure(pod *corev1.Pod) bool {
	taint := &corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.Background(), taint, false) {
			return true
		}
	}
	return false
}

func conditionNames(cs []corev1.NodeConditionType) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

package kubelet

// The eviction manager's place in the kubelet (upstream: kubelet.go NewMainKubelet's
// eviction.NewManager and killPodNow, initializeRuntimeDependentModules' evictionManager.Start,
// GetActivePods, filterOutInactivePods; nodestatus setters' pressure conditions): what it reads
// (the stats, the active pods), how it kills (the pod workers), and who reads it (admission, the
// node status).

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/eviction"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// startEviction makes the eviction manager and runs its loop: a pass every 10 s over the stats
// Summary. The node status reads its pressure conditions; admission asks it about new pods.
func (k *Kubelet) startEviction(context.Context) (component, error) {
	cfg := &k.opts.Config
	m, err := eviction.New(eviction.Config{
		Summary:                       k.stats,
		Thresholds:                    k.opts.EvictionThresholds,
		PressureTransitionPeriod:      cfg.EvictionPressureTransitionPeriod.Duration,
		MaxPodGracePeriodSeconds:      int64(cfg.EvictionMaxPodGracePeriod),
		LocalStorageCapacityIsolation: cfg.LocalStorageCapacityIsolation == nil || *cfg.LocalStorageCapacityIsolation,
		ActivePods:                    k.activePods,
		KillPod:                       k.evictPod,
		PodCleanedUp:                  k.podCleanedUp,
		Recorder:                      k.recorder,
		NodeRef:                       k.status.NodeRef(),
		OnEviction:                    func(signal string) { k.metrics.Evictions.WithLabelValues(signal).Inc() },
		Journal:                       k.journal.For(journal.SourceEviction),
		Clock:                         k.clock,
	})
	if err != nil {
		return nil, err
	}
	k.evictionAdmit = m.Admit // before the pod sources start: no pod is admitted without it
	k.status.SetPressure(m.IsUnder)
	return loop(m.Run), nil
}

// activePods are the pods that hold the node's resources: admitted (the workers know them) and
// neither terminated nor done with a terminal phase, except those still terminating (upstream
// GetActivePods with filterOutInactivePods). Admission fits a new pod beside them; the eviction
// manager chooses among them.
func (k *Kubelet) activePods() []*corev1.Pod {
	var active []*corev1.Pod
	for _, pod := range k.podManager.GetPods() {
		st, known := k.podWorkers.State(pod.UID)
		if !known || st == podworkers.Terminated || st == podworkers.Finished || (isTerminal(pod) && st != podworkers.Terminating) {
			continue // rejected, or no longer holds what it asked for
		}
		active = append(active, pod)
	}
	return active
}

// evictPod is the eviction manager's KillPod (upstream killPodNow): the pod's status will say
// Failed, reason Evicted, with the message and condition e gives, and its worker stops it within
// gracePeriod seconds (at least 1, as upstream's pod workers). It does not wait.
func (k *Kubelet) evictPod(pod *corev1.Pod, gracePeriod int64, e eviction.Eviction) error {
	k.reasonsMu.Lock()
	k.evicted[pod.UID] = &podEviction{reason: eviction.Reason, message: e.Message, condition: e.Condition}
	k.reasonsMu.Unlock()
	grace := max(gracePeriod, 1)
	mirror, _ := k.podManager.GetMirrorPodByPod(pod)
	k.podWorkers.UpdatePod(podworkers.UpdatePodOptions{UpdateType: podworkers.SyncPodKill, Pod: pod, MirrorPod: mirror, GracePeriodOverride: &grace})
	return nil
}

// evictedBy returns the eviction manager's decision about the pod, or nil.
func (k *Kubelet) evictedBy(pod *corev1.Pod) *podEviction {
	k.reasonsMu.Lock()
	defer k.reasonsMu.Unlock()
	return k.evicted[pod.UID]
}

// podCleanedUp tells the eviction manager an evicted pod has let go of what it used: its worker
// has stopped every container, or is gone (upstream podResourcesAreReclaimed, without volumes
// and cgroups).
func (k *Kubelet) podCleanedUp(pod *corev1.Pod) bool {
	st, known := k.podWorkers.State(pod.UID)
	return !known || st == podworkers.Terminated || st == podworkers.Finished
}

package eviction

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// From a Summary to the thresholds that drive eviction: pure functions, in the order the
// manager's synchronize calls them (upstream helpers.go makeSignalObservations, thresholdsMet,
// thresholdsFirstObservedAt, thresholdsMetGracePeriod, nodeConditions,
// nodeConditionsLastObservedAt, nodeConditionsObservedSince, thresholdsUpdatedStats).

// observation is one signal's value: what is left (available) of its capacity, at time.
type observation struct {
	available, capacity int64
	time                time.Time
}

type observations map[Signal]observation

// makeObservations reads the signals from a Summary (upstream makeSignalObservations):
//
//	memory.available    node.memory.availableBytes, of availableBytes + workingSetBytes
//	nodefs.available    node.fs.availableBytes, of capacityBytes
//	nodefs.inodesFree   node.fs.inodesFree, of inodes
//	imagefs.available   node.runtime.imageFs.availableBytes, of capacityBytes
//	imagefs.inodesFree  node.runtime.imageFs.inodesFree, of inodes
//	pid.available       node.rlimit.maxpid − curproc, of maxpid
//
// A signal whose figures are missing is not observed (its thresholds are then never met).
func makeObservations(s *statsv1alpha1.Summary) observations {
	obs := observations{}
	if m := s.Node.Memory; m != nil && m.AvailableBytes != nil && m.WorkingSetBytes != nil {
		obs[SignalMemoryAvailable] = observation{int64(*m.AvailableBytes), int64(*m.AvailableBytes + *m.WorkingSetBytes), m.Time.Time}
	}
	fs := func(bytes, inodes Signal, f *statsv1alpha1.FsStats) {
		if f == nil {
			return
		}
		if f.AvailableBytes != nil && f.CapacityBytes != nil {
			obs[bytes] = observation{int64(*f.AvailableBytes), int64(*f.CapacityBytes), f.Time.Time}
		}
		if f.InodesFree != nil && f.Inodes != nil {
			obs[inodes] = observation{int64(*f.InodesFree), int64(*f.Inodes), f.Time.Time}
		}
	}
	fs(SignalNodeFsAvailable, SignalNodeFsInodesFree, s.Node.Fs)
	if s.Node.Runtime != nil {
		fs(SignalImageFsAvailable, SignalImageFsInodesFree, s.Node.Runtime.ImageFs)
	}
	if r := s.Node.Rlimit; r != nil && r.MaxPID != nil && r.NumOfRunningProcesses != nil {
		obs[SignalPIDAvailable] = observation{*r.MaxPID - *r.NumOfRunningProcesses, *r.MaxPID, r.Time.Time}
	}
	return obs
}

// thresholdsMet returns the thresholds whose signal is below their value; with
// enforceMinReclaim, below value + minReclaim (a threshold already met stays met until that much
// is reclaimed). Unobserved signals are skipped (upstream thresholdsMet).
func thresholdsMet(thresholds []Threshold, obs observations, enforceMinReclaim bool) []Threshold {
	var met []Threshold
	for _, t := range thresholds {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		limit := t.Value.Amount(o.capacity)
		if enforceMinReclaim && t.MinReclaim != nil {
			limit += t.MinReclaim.Amount(o.capacity)
		}
		if o.available < limit {
			met = append(met, t)
		}
	}
	return met
}

// mergeThresholds adds to a the thresholds of b it does not have.
func mergeThresholds(a, b []Threshold) []Threshold {
	out := append([]Threshold(nil), a...)
	for _, t := range b {
		if !hasThreshold(out, t.key()) {
			out = append(out, t)
		}
	}
	return out
}

func hasThreshold(ts []Threshold, k key) bool {
	for _, t := range ts {
		if t.key() == k {
			return true
		}
	}
	return false
}

// firstObservedAt keeps, for each threshold met now, when it was first met: its old time if it
// was met at the last pass too, else now. A threshold not met now is forgotten.
func firstObservedAt(met []Threshold, last map[key]time.Time, now time.Time) map[key]time.Time {
	out := map[key]time.Time{}
	for _, t := range met {
		at, ok := last[t.key()]
		if !ok {
			at = now
		}
		out[t.key()] = at
	}
	return out
}

// metGracePeriod returns the thresholds of met that have been met for their grace period: hard
// ones at once, soft ones once GracePeriod has passed since firstObserved.
func metGracePeriod(met []Threshold, firstObserved map[key]time.Time, now time.Time) []Threshold {
	var out []Threshold
	for _, t := range met {
		if now.Sub(firstObserved[t.key()]) >= t.GracePeriod {
			out = append(out, t)
		}
	}
	return out
}

// nodeConditionsOf returns the node conditions the thresholds drive, each once, in order.
func nodeConditionsOf(thresholds []Threshold) []corev1.NodeConditionType {
	var out []corev1.NodeConditionType
	for _, t := range thresholds {
		if c, ok := signalCondition[t.Signal]; ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// conditionsLastObservedAt records now for the conditions observed now and keeps the older
// times of the others.
func conditionsLastObservedAt(observed []corev1.NodeConditionType, last map[corev1.NodeConditionType]time.Time, now time.Time) map[corev1.NodeConditionType]time.Time {
	out := map[corev1.NodeConditionType]time.Time{}
	for c, at := range last {
		out[c] = at
	}
	for _, c := range observed {
		out[c] = now
	}
	return out
}

// conditionsObservedSince returns the conditions last observed less than period ago: a
// pressure condition stays True for evictionPressureTransitionPeriod after its threshold was
// last met, so it does not flap. The result is in a fixed order (memory, disk, PID).
func conditionsObservedSince(lastObserved map[corev1.NodeConditionType]time.Time, period time.Duration, now time.Time) []corev1.NodeConditionType {
	var out []corev1.NodeConditionType
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		if at, ok := lastObserved[c]; ok && now.Sub(at) < period {
			out = append(out, c)
		}
	}
	return out
}

// updatedStats keeps the thresholds whose signal was measured after the last pass's
// measurement (or has no time): a pod is not evicted twice on the same stale figures.
func updatedStats(thresholds []Threshold, obs, last observations) []Threshold {
	var out []Threshold
	for _, t := range thresholds {
		o, ok := obs[t.Signal]
		if !ok {
			continue
		}
		l, seen := last[t.Signal]
		if !seen || o.time.IsZero() || o.time.After(l.time) {
			out = append(out, t)
		}
	}
	return out
}

// reclaimOrder puts the threshold to act on first: memory before every other signal, signals
// with a resource to reclaim before those without (upstream byEvictionPriority). Stable.
func reclaimOrder(thresholds []Threshold) []Threshold {
	rank := func(t Threshold) int {
		switch r, ok := signalResource[t.Signal]; {
		case r == corev1.ResourceMemory:
			return 0
		case ok:
			return 1
		}
		return 2
	}
	out := slices.Clone(thresholds)
	slices.SortStableFunc(out, func(a, b Threshold) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// quantity prints an amount of a signal's resource as upstream does in messages: bytes in
// binary units (51200Ki), counts as plain numbers.
func quantity(s Signal, v int64) string {
	if r := signalResource[s]; r == resourceInodes || r == resourcePids {
		return resource.NewQuantity(v, resource.DecimalSI).String()
	}
	return resource.NewQuantity(v, resource.BinarySI).String()
}

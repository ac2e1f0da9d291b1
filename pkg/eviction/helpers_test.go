package eviction

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// Shared helpers of the package's tests: synthetic pods and Summaries.

const mi = 1 << 20

// pod is a pod with one container "app" requesting and limiting memory (Guaranteed when both are
// set, BestEffort when neither is).
func pod(name string, priority int32, request, limit string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 1},
		Spec: corev1.PodSpec{Priority: ptr.To(priority), Containers: []corev1.Container{{Name: "app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}}},
	}
	if request != "" {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse(request)
	}
	if limit != "" {
		p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
	}
	return p
}

// podStat is the stats of p: its container "app" has the working set, the writable layer and
// the process count given; the pod's are the same.
func podStat(p *corev1.Pod, workingSet, rootfs uint64, procs uint64) statsv1alpha1.PodStats {
	return statsv1alpha1.PodStats{
		PodRef:       statsv1alpha1.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)},
		Memory:       &statsv1alpha1.MemoryStats{WorkingSetBytes: ptr.To(workingSet)},
		ProcessStats: &statsv1alpha1.ProcessStats{ProcessCount: ptr.To(procs)},
		Containers: []statsv1alpha1.ContainerStats{{Name: "app",
			Memory: &statsv1alpha1.MemoryStats{WorkingSetBytes: ptr.To(workingSet)},
			Rootfs: &statsv1alpha1.FsStats{UsedBytes: ptr.To(rootfs), InodesUsed: ptr.To(uint64(1))},
			Logs:   &statsv1alpha1.FsStats{UsedBytes: ptr.To(uint64(0)), InodesUsed: ptr.To(uint64(1))},
		}},
		EphemeralStorage: &statsv1alpha1.FsStats{UsedBytes: ptr.To(rootfs)},
	}
}

// summary is a node of memCapacity bytes whose pods use workingSet bytes in all, at t, with
// plenty of disk and PIDs.
func summary(memCapacity, workingSet uint64, t time.Time, pods ...statsv1alpha1.PodStats) *statsv1alpha1.Summary {
	at := metav1.NewTime(t)
	fs := &statsv1alpha1.FsStats{Time: at, AvailableBytes: ptr.To(uint64(90 << 30)), CapacityBytes: ptr.To(uint64(100 << 30)),
		InodesFree: ptr.To(uint64(900)), Inodes: ptr.To(uint64(1000))}
	return &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{
			Memory:  &statsv1alpha1.MemoryStats{Time: at, AvailableBytes: ptr.To(memCapacity - workingSet), WorkingSetBytes: ptr.To(workingSet)},
			Fs:      fs,
			Runtime: &statsv1alpha1.RuntimeStats{ImageFs: fs},
			Rlimit:  &statsv1alpha1.RlimitStats{Time: at, MaxPID: ptr.To(int64(1000)), NumOfRunningProcesses: ptr.To(int64(100))},
		},
		Pods: pods,
	}
}

func mustParse(t *testing.T, hard, soft, grace, reclaim map[string]string) []Threshold {
	t.Helper()
	ts, err := ParseThresholds(hard, soft, grace, reclaim)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The signals as upstream's makeSignalObservations reads them from the Summary.
func TestMakeObservations(t *testing.T) {
	now := time.Unix(1000, 0)
	obs := makeObservations(summary(2048*mi, 300*mi, now))
	want := map[Signal]observation{
		SignalMemoryAvailable:   {1748 * mi, 2048 * mi, now},
		SignalNodeFsAvailable:   {90 << 30, 100 << 30, now},
		SignalNodeFsInodesFree:  {900, 1000, now},
		SignalImageFsAvailable:  {90 << 30, 100 << 30, now},
		SignalImageFsInodesFree: {900, 1000, now},
		SignalPIDAvailable:      {900, 1000, now},
	}
	for s, w := range want {
		if got := obs[s]; got.available != w.available || got.capacity != w.capacity || !got.time.Equal(w.time) {
			t.Errorf("%s = %+v, want %+v", s, got, w)
		}
	}
	if len(obs) != len(want) {
		t.Errorf("%d signals observed, want %d", len(obs), len(want))
	}
	if obs := makeObservations(&statsv1alpha1.Summary{}); len(obs) != 0 {
		t.Errorf("an empty Summary observed %v, want nothing", obs)
	}
}

// A threshold is met when the signal is below it; a percentage is of the capacity; with
// minReclaim a met threshold stays met until value + minReclaim is free again.
func TestThresholdsMet(t *testing.T) {
	ts := mustParse(t, map[string]string{"memory.available": "500Mi", "nodefs.available": "10%"}, nil, nil,
		map[string]string{"memory.available": "200Mi"})
	for _, tc := range []struct {
		name       string
		memFree    int64
		fsFree     int64
		minReclaim bool
		want       []Signal
	}{
		{"plenty", 1000 * mi, 50, false, nil},
		{"memory below", 499 * mi, 50, false, []Signal{SignalMemoryAvailable}},
		{"memory at the threshold is not below it", 500 * mi, 50, false, nil},
		{"disk below 10%", 1000 * mi, 9, false, []Signal{SignalNodeFsAvailable}},
		{"memory back above but not by minReclaim", 600 * mi, 50, true, []Signal{SignalMemoryAvailable}},
		{"memory back above by minReclaim", 700 * mi, 50, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := observations{SignalMemoryAvailable: {available: tc.memFree, capacity: 2048 * mi},
				SignalNodeFsAvailable: {available: tc.fsFree, capacity: 100}}
			var got []Signal
			for _, th := range thresholdsMet(ts, obs, tc.minReclaim) {
				got = append(got, th.Signal)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("met %v, want %v", got, tc.want)
			}
		})
	}
}

// A soft threshold acts only after its grace period; a hard one at once. A condition stays for
// the transition period after its threshold was last met.
func TestGracePeriodAndTransitionPeriod(t *testing.T) {
	ts := mustParse(t, map[string]string{"memory.available": "100Mi"}, map[string]string{"memory.available": "500Mi"},
		map[string]string{"memory.available": "1m"}, nil)
	hard, soft := ts[0], ts[1]
	t0 := time.Unix(1000, 0)
	first := firstObservedAt([]Threshold{soft}, nil, t0)
	if got := metGracePeriod([]Threshold{soft}, first, t0.Add(59*time.Second)); len(got) != 0 {
		t.Errorf("soft threshold acts after 59 s of its 1 m grace period: %v", got)
	}
	first = firstObservedAt([]Threshold{soft, hard}, first, t0.Add(time.Minute))
	if got := metGracePeriod([]Threshold{soft, hard}, first, t0.Add(time.Minute)); len(got) != 2 {
		t.Errorf("after 1 m both thresholds should act, got %v", got)
	}
	if first = firstObservedAt(nil, first, t0.Add(2*time.Minute)); len(first) != 0 {
		t.Errorf("thresholds no longer met are not forgotten: %v", first)
	}

	last := conditionsLastObservedAt(nodeConditionsOf([]Threshold{soft}), nil, t0)
	if got := conditionsObservedSince(last, 5*time.Minute, t0.Add(4*time.Minute)); len(got) != 1 || got[0] != corev1.NodeMemoryPressure {
		t.Errorf("4 m after, within the 5 m transition period: %v, want [MemoryPressure]", got)
	}
	last = conditionsLastObservedAt(nil, last, t0.Add(5*time.Minute))
	if got := conditionsObservedSince(last, 5*time.Minute, t0.Add(5*time.Minute)); len(got) != 0 {
		t.Errorf("5 m after: %v, want no condition", got)
	}
}

// Memory is reclaimed before disk and PIDs, whatever the order thresholds were met in.
func TestReclaimOrder(t *testing.T) {
	ts := []Threshold{{Signal: SignalPIDAvailable}, {Signal: SignalNodeFsAvailable}, {Signal: SignalMemoryAvailable}}
	if got := reclaimOrder(ts)[0].Signal; got != SignalMemoryAvailable {
		t.Errorf("first to reclaim %s, want memory.available", got)
	}
	if got := reclaimOrder(ts[:2])[0].Signal; got != SignalPIDAvailable {
		t.Errorf("first of pid and nodefs %s, want pid.available (stable order)", got)
	}
}

// Each setting's mistake is named with its flag.
func TestParseThresholds(t *testing.T) {
	ts := mustParse(t, map[string]string{"memory.available": "100Mi"}, map[string]string{"nodefs.available": "15%"},
		map[string]string{"nodefs.available": "90s"}, map[string]string{"nodefs.available": "1Gi"})
	if len(ts) != 2 || !ts[0].hard() || ts[1].GracePeriod != 90*time.Second || ts[1].Value.Percentage != 0.15 || ts[1].MinReclaim == nil {
		t.Errorf("parsed %+v", ts)
	}
	for _, tc := range []struct {
		name                       string
		hard, soft, grace, reclaim map[string]string
		want                       string
	}{
		{"bad hard", map[string]string{"memory.available": "lots"}, nil, nil, nil, "evictionHard (--eviction-hard)"},
		{"bad soft signal", nil, map[string]string{"cpu.available": "1"}, nil, nil, `evictionSoft (--eviction-soft): unsupported eviction signal "cpu.available"`},
		{"soft without grace", nil, map[string]string{"memory.available": "1Gi"}, nil, nil, "set evictionSoftGracePeriod (--eviction-soft-grace-period) memory.available=<duration>"},
		{"bad grace", nil, nil, map[string]string{"memory.available": "soon"}, nil, "not a duration"},
		{"zero grace", nil, nil, map[string]string{"memory.available": "0s"}, nil, "must be positive"},
		{"negative reclaim", nil, nil, nil, map[string]string{"memory.available": "-1Mi"}, "evictionMinimumReclaim (--eviction-minimum-reclaim)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseThresholds(tc.hard, tc.soft, tc.grace, tc.reclaim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

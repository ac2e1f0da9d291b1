package eviction

import (
	"cmp"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// Which pod goes first: the ranking functions and the eviction message (upstream helpers.go
// rankMemoryPressure, rankDiskPressureFunc, rankPIDPressure, exceedMemoryRequests, priority,
// memory, exceedDiskRequests, disk, process, evictionMessage). Pure.

// The messages (upstream helpers.go); each sentence ends with a space, as upstream's.
const (
	nodeLowMessageFmt                   = "The node was low on resource: %v. "
	thresholdMetMessageFmt              = "Threshold quantity: %v, available: %v. "
	containerMessageFmt                 = "Container %s was using %s, request is %s, has larger consumption of %v. "
	nodeConditionMessageFmt             = "The node had condition: %v. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
)

// podStats finds a pod's stats in the Summary; false when it has none (a pod without stats is
// ranked first, as upstream: it may be the one using everything).
type podStats func(pod *corev1.Pod) (statsv1alpha1.PodStats, bool)

func statsByUID(pods []statsv1alpha1.PodStats) podStats {
	byUID := make(map[string]statsv1alpha1.PodStats, len(pods))
	for _, p := range pods {
		byUID[p.PodRef.UID] = p
	}
	return func(pod *corev1.Pod) (statsv1alpha1.PodStats, bool) {
		s, ok := byUID[string(pod.UID)]
		return s, ok
	}
}

// cmpFunc orders two pods: negative when p1 goes before p2 (is evicted first).
type cmpFunc func(p1, p2 *corev1.Pod) int

// orderedBy sorts pods by the first cmpFunc that tells them apart (stable, so equal pods keep
// the order the kubelet listed them in).
func orderedBy(pods []*corev1.Pod, cmps ...cmpFunc) {
	sort.SliceStable(pods, func(i, j int) bool {
		for _, c := range cmps {
			if r := c(pods[i], pods[j]); r != 0 {
				return r < 0
			}
		}
		return false
	})
}

// rankMemoryPressure: pods using more memory than they request first, then lower priority, then
// more memory above their request.
func rankMemoryPressure(pods []*corev1.Pod, stats podStats) {
	orderedBy(pods, exceedsRequest(stats, memoryUsage, corev1.ResourceMemory), priority, usageAboveRequest(stats, memoryUsage, corev1.ResourceMemory))
}

// rankDiskPressure: the same with local storage (containers' writable layers and logs, and local
// volumes) for bytes or inodes; minikubelet assumes one filesystem, so every disk signal
// measures all of them (upstream's ranking without a dedicated imagefs).
func rankDiskPressure(r corev1.ResourceName) func([]*corev1.Pod, podStats) {
	usage := func(pod *corev1.Pod, s statsv1alpha1.PodStats) int64 { return diskUsage(pod, s, r) }
	return func(pods []*corev1.Pod, stats podStats) {
		// As upstream: "exceeds its request" compares with the request of r (none for inodes),
		// "above its request" subtracts the ephemeral-storage request in both cases.
		orderedBy(pods, exceedsRequest(stats, usage, r), priority, usageAboveRequest(stats, usage, corev1.ResourceEphemeralStorage))
	}
}

// rankPIDPressure: lower priority first, then more processes.
func rankPIDPressure(pods []*corev1.Pod, stats podStats) {
	orderedBy(pods, priority, func(p1, p2 *corev1.Pod) int {
		return withStats(stats, p1, p2, func(s1, s2 statsv1alpha1.PodStats) int {
			return cmp.Compare(processes(s2), processes(s1))
		})
	})
}

// rankFor is the ranking of a signal's resource.
func rankFor(s Signal) func([]*corev1.Pod, podStats) {
	switch signalResource[s] {
	case corev1.ResourceMemory:
		return rankMemoryPressure
	case corev1.ResourceEphemeralStorage:
		return rankDiskPressure(corev1.ResourceEphemeralStorage)
	case resourceInodes:
		return rankDiskPressure(resourceInodes)
	case resourcePids:
		return rankPIDPressure
	}
	return nil
}

// usageFunc is how much of a resource a pod uses, from its stats.
type usageFunc func(pod *corev1.Pod, s statsv1alpha1.PodStats) int64

func exceedsRequest(stats podStats, usage usageFunc, request corev1.ResourceName) cmpFunc {
	return func(p1, p2 *corev1.Pod) int {
		return withStats(stats, p1, p2, func(s1, s2 statsv1alpha1.PodStats) int {
			return cmpBool(usage(p1, s1) > requestOf(p1, request), usage(p2, s2) > requestOf(p2, request))
		})
	}
}

func usageAboveRequest(stats podStats, usage usageFunc, request corev1.ResourceName) cmpFunc {
	return func(p1, p2 *corev1.Pod) int {
		return withStats(stats, p1, p2, func(s1, s2 statsv1alpha1.PodStats) int {
			return cmp.Compare(usage(p2, s2)-requestOf(p2, request), usage(p1, s1)-requestOf(p1, request))
		})
	}
}

// priority: the lower spec.priority goes first.
func priority(p1, p2 *corev1.Pod) int { return cmp.Compare(podPriority(p1), podPriority(p2)) }

// withStats compares two pods by their stats; a pod without stats goes first.
func withStats(stats podStats, p1, p2 *corev1.Pod, compare func(s1, s2 statsv1alpha1.PodStats) int) int {
	s1, ok1 := stats(p1)
	s2, ok2 := stats(p2)
	if !ok1 || !ok2 {
		return cmpBool(!ok1, !ok2)
	}
	return compare(s1, s2)
}

// cmpBool puts true first.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

func podPriority(pod *corev1.Pod) int64 {
	if pod.Spec.Priority != nil {
		return int64(*pod.Spec.Priority)
	}
	return 0
}

// requestOf is the pod's effective request of r (init containers, sidecars, pod-level requests
// and overhead counted as pkg/cm counts them for admission).
func requestOf(pod *corev1.Pod, r corev1.ResourceName) int64 {
	q := cm.PodRequests(pod)[r]
	return q.Value()
}

func memoryUsage(_ *corev1.Pod, s statsv1alpha1.PodStats) int64 {
	if s.Memory == nil || s.Memory.WorkingSetBytes == nil {
		return 0
	}
	return int64(*s.Memory.WorkingSetBytes)
}

func processes(s statsv1alpha1.PodStats) int64 {
	if s.ProcessStats == nil || s.ProcessStats.ProcessCount == nil {
		return 0
	}
	return int64(*s.ProcessStats.ProcessCount)
}

// diskUsage is a pod's local storage in bytes (ephemeral-storage) or inodes: its containers'
// writable layers and logs, and its local volumes (emptyDir on disk, configMap, gitRepo,
// hostPath; upstream podDiskUsage with localVolumeNames).
func diskUsage(pod *corev1.Pod, s statsv1alpha1.PodStats, r corev1.ResourceName) int64 {
	var total int64
	add := func(f *statsv1alpha1.FsStats) {
		switch {
		case f == nil:
		case r == resourceInodes && f.InodesUsed != nil:
			total += int64(*f.InodesUsed)
		case r != resourceInodes && f.UsedBytes != nil:
			total += int64(*f.UsedBytes)
		}
	}
	for _, c := range s.Containers {
		add(c.Rootfs)
		add(c.Logs)
	}
	local := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil || v.GitRepo != nil || v.ConfigMap != nil || (v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumDefault) {
			local[v.Name] = true
		}
	}
	for i := range s.VolumeStats {
		if local[s.VolumeStats[i].Name] {
			add(&s.VolumeStats[i].FsStats)
		}
	}
	return total
}

// evictionMessage says why pod is evicted to reclaim r (upstream evictionMessage): the
// resource, the threshold and what was left, then each container using more than it requests.
// Only memory and ephemeral-storage have per-container usage.
func evictionMessage(r corev1.ResourceName, pod *corev1.Pod, stats podStats, thresholds []Threshold, obs observations) string {
	msg := fmt.Sprintf(nodeLowMessageFmt, r)
	for _, t := range thresholds {
		if o, ok := obs[t.Signal]; ok && signalResource[t.Signal] == r {
			msg += fmt.Sprintf(thresholdMetMessageFmt, thresholdQuantity(t, o.capacity), quantity(t.Signal, o.available))
			break
		}
	}
	s, ok := stats(pod)
	if !ok {
		return msg
	}
	containers := append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...)
	for _, cs := range s.Containers {
		for _, c := range containers {
			if c.Name != cs.Name {
				continue
			}
			request := c.Resources.Requests[r]
			var usage *resource.Quantity
			switch {
			case r == corev1.ResourceMemory && cs.Memory != nil && cs.Memory.WorkingSetBytes != nil:
				usage = resource.NewQuantity(int64(*cs.Memory.WorkingSetBytes), resource.BinarySI)
			case r == corev1.ResourceEphemeralStorage && cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil && cs.Logs != nil && cs.Logs.UsedBytes != nil:
				usage = resource.NewQuantity(int64(*cs.Rootfs.UsedBytes+*cs.Logs.UsedBytes), resource.BinarySI)
			}
			if usage != nil && usage.Cmp(request) > 0 {
				msg += fmt.Sprintf(containerMessageFmt, c.Name, usage.String(), request.String(), r)
			}
			break
		}
	}
	return msg
}

// thresholdQuantity prints a threshold's amount: a quantity as written ("100Mi"), a percentage
// as what it is of the capacity.
func thresholdQuantity(t Threshold, capacity int64) string {
	if t.Value.Quantity != nil {
		return t.Value.Quantity.String()
	}
	return quantity(t.Signal, t.Value.Amount(capacity))
}

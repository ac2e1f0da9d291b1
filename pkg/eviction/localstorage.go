package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// Local storage limits (localStorageCapacityIsolation; upstream eviction_manager.go
// localStorageEviction, emptyDirLimitEviction, podEphemeralStorageLimitEviction,
// containerEphemeralStorageLimitEviction): a pod that writes more than it may is evicted whatever
// the node's disk, in this order of checks:
//
//  1. an emptyDir (on disk or in memory) over its sizeLimit;
//  2. the pod's ephemeral storage (writable layers, logs, local volumes: the Summary's
//     pod ephemeral-storage) over the containers' summed ephemeral-storage limits;
//  3. a container's writable layer and logs over its own ephemeral-storage limit.

// The "signals" of local storage limit evictions, as upstream labels them in kubelet_evictions.
const (
	signalEmptyDirFsLimit           = "emptydirfs.limit"
	signalEphemeralPodFsLimit       = "ephemeralpodfs.limit"
	signalEphemeralContainerFsLimit = "ephemeralcontainerfs.limit"
)

// storageLimitExceeded returns the limit pod exceeds first (its signal) and the eviction's
// message, or "", "". Pure.
func storageLimitExceeded(pod *corev1.Pod, s statsv1alpha1.PodStats) (signal, message string) {
	used := map[string]uint64{}
	for _, v := range s.VolumeStats {
		if v.UsedBytes != nil {
			used[v.Name] = *v.UsedBytes
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() <= 0 {
			continue
		}
		if u, ok := used[v.Name]; ok && int64(u) > v.EmptyDir.SizeLimit.Value() {
			return signalEmptyDirFsLimit, fmt.Sprintf(emptyDirMessageFmt, v.Name, v.EmptyDir.SizeLimit.String())
		}
	}

	if limit, ok := cm.AggregateContainerLimits(pod)[corev1.ResourceEphemeralStorage]; ok {
		var total int64
		if s.EphemeralStorage != nil && s.EphemeralStorage.UsedBytes != nil {
			total = int64(*s.EphemeralStorage.UsedBytes)
		}
		if total > limit.Value() {
			return signalEphemeralPodFsLimit, fmt.Sprintf(podEphemeralStorageMessageFmt, limit.String())
		}
	}

	limits := map[string]resource.Quantity{}
	for _, c := range pod.Spec.Containers {
		if l, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok && !l.IsZero() {
			limits[c.Name] = l
		}
	}
	for _, c := range s.Containers {
		l, ok := limits[c.Name]
		if !ok {
			continue
		}
		var total int64
		for _, f := range []*statsv1alpha1.FsStats{c.Logs, c.Rootfs} { // no dedicated imagefs: both count
			if f != nil && f.UsedBytes != nil {
				total += int64(*f.UsedBytes)
			}
		}
		if total > l.Value() {
			return signalEphemeralContainerFsLimit, fmt.Sprintf(containerEphemeralStorageMessageFmt, c.Name, l.String())
		}
	}
	return "", ""
}

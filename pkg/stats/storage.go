package stats

import (
	"io/fs"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// measureLogs sets each container's Logs to what its log directory holds
// (<podLogsDir>/<namespace>_<name>_<uid>/<container>/, every restart's file), and each pod's
// EphemeralStorage to its containers' writable layers plus their logs (upstream:
// getPodContainerLogStats and calcEphemeralStorage, without volumes).
func measureLogs(pods []statsapi.PodStats, podLogsDir string, now time.Time) {
	for i := range pods {
		ps := &pods[i]
		eph := &statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: ptr.To[uint64](0), InodesUsed: ptr.To[uint64](0)}
		for j := range ps.Containers {
			c := &ps.Containers[j]
			dir := filepath.Dir(kuberuntime.ContainerLogFile(podLogsDir, ps.PodRef.Namespace, ps.PodRef.Name, types.UID(ps.PodRef.UID), c.Name, 0))
			bytes, files := du(dir)
			c.Logs = &statsapi.FsStats{Time: metav1.NewTime(now), UsedBytes: ptr.To(bytes), InodesUsed: ptr.To(files)}
			*eph.UsedBytes += bytes + ptr.Deref(c.Rootfs.UsedBytes, 0)
			*eph.InodesUsed += files + ptr.Deref(c.Rootfs.InodesUsed, 0)
		}
		ps.EphemeralStorage = eph
	}
}

// du is the size and number of the regular files under dir; a missing dir holds nothing.
func du(dir string) (bytes, files uint64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil //nolint:nilerr // a file that vanished while we walk counts as nothing
		}
		if info, err := d.Info(); err == nil {
			bytes += uint64(info.Size())
			files++
		}
		return nil
	})
	return bytes, files
}

// shareFs gives the containers' and pods' filesystem figures the node filesystem's capacity and
// free space: a writable layer and a log live on it (no separate image filesystem). Pure.
func shareFs(pods []statsapi.PodStats, node *statsapi.FsStats) {
	set := func(s *statsapi.FsStats) {
		if s == nil || node == nil {
			return
		}
		s.CapacityBytes, s.AvailableBytes, s.Inodes, s.InodesFree = node.CapacityBytes, node.AvailableBytes, node.Inodes, node.InodesFree
	}
	for i := range pods {
		set(pods[i].EphemeralStorage)
		for j := range pods[i].Containers {
			set(pods[i].Containers[j].Rootfs)
			set(pods[i].Containers[j].Logs)
		}
	}
}

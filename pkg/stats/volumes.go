package stats

// Volume stats (upstream: pkg/kubelet/server/stats/fs_resource_analyzer.go,
// volume_stat_calculator.go, pkg/volume/metrics_du.go, metrics_statfs.go): every
// volumeStatsAggPeriod (1 min) one turn measures the set-up volumes of every pod the kubelet
// knows; the Summary, the eviction manager and kubelet_volume_stats_* read what the last turn
// found, so a walk never runs more often than the period, whoever asks.

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// DefaultVolumeStatsAggPeriod is upstream's volumeStatsAggPeriod default.
const DefaultVolumeStatsAggPeriod = time.Minute

// MountedVolume is one set-up volume of a pod, as the volume manager knows it.
type MountedVolume struct {
	// Path is the volume's directory on the host.
	Path string
	// WholeFS: the volume is a filesystem of its own (a local PersistentVolume), measured by
	// statfs as upstream's MetricsStatFS; otherwise its files are walked (MetricsDu).
	WholeFS bool
}

// VolumeStatsConfig configures a VolumeStats.
type VolumeStatsConfig struct {
	// Pods returns the pods the kubelet knows; it must not block. Required.
	Pods func() []*corev1.Pod
	// Volumes returns the pod's measurable set-up volumes by the pod's volume name (hostPath and
	// CSI volumes are left out: upstream's MetricsNil and NodeGetVolumeStats). Required.
	Volumes func(uid types.UID) map[string]MountedVolume
	// Period is how often the volumes are measured (DefaultVolumeStatsAggPeriod if 0).
	Period time.Duration
	// Clock ticks the loop and stamps the figures (default: the real clock).
	Clock clock.WithTicker
}

// VolumeStats measures pods' volumes and keeps the last figures (upstream: fsResourceAnalyzer
// with one volumeStatCalculator per pod). Safe for concurrent use.
type VolumeStats struct {
	cfg VolumeStatsConfig

	mu   sync.Mutex
	pods map[types.UID][]statsapi.VolumeStats // the last turn's figures, in the pods' volume order
}

// NewVolumeStats validates cfg and fills its defaults.
func NewVolumeStats(cfg VolumeStatsConfig) (*VolumeStats, error) {
	if cfg.Pods == nil || cfg.Volumes == nil {
		return nil, errors.New("stats: VolumeStatsConfig.Pods and Volumes are required")
	}
	if cfg.Period <= 0 {
		cfg.Period = DefaultVolumeStatsAggPeriod
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &VolumeStats{cfg: cfg, pods: map[types.UID][]statsapi.VolumeStats{}}, nil
}

// Run measures now and then every Period until ctx ends.
func (v *VolumeStats) Run(ctx context.Context) {
	t := v.cfg.Clock.NewTicker(v.cfg.Period)
	defer t.Stop()
	for {
		v.Update(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Update is one turn: measure every known pod's volumes, forget the pods that are gone.
func (v *VolumeStats) Update(ctx context.Context) {
	now := metav1.NewTime(v.cfg.Clock.Now())
	next := map[types.UID][]statsapi.VolumeStats{}
	for _, pod := range v.cfg.Pods() {
		if vols := v.cfg.Volumes(pod.UID); len(vols) > 0 {
			next[pod.UID] = measurePod(ctx, pod, vols, now)
		}
	}
	v.mu.Lock()
	v.pods = next
	v.mu.Unlock()
}

// ForPod is the pod's volumes as the last turn measured them; the caller must not modify them.
func (v *VolumeStats) ForPod(uid types.UID) []statsapi.VolumeStats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.pods[uid]
}

// measurePod measures each volume (upstream calcAndStoreStats): a claim-backed volume (a
// persistentVolumeClaim, or a generic ephemeral volume's claim <pod>-<volume>) carries its
// PVCRef. A volume that cannot be measured now is left out and logged at V(4).
func measurePod(ctx context.Context, pod *corev1.Pod, vols map[string]MountedVolume, now metav1.Time) []statsapi.VolumeStats {
	out := make([]statsapi.VolumeStats, 0, len(vols))
	for _, spec := range pod.Spec.Volumes {
		mv, ok := vols[spec.Name]
		if !ok {
			continue
		}
		fsStats, err := measureVolume(mv, now)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("Failed to calculate volume metrics", "pod", klog.KObj(pod), "volumeName", spec.Name, "err", err)
			continue
		}
		vs := statsapi.VolumeStats{Name: spec.Name, FsStats: *fsStats}
		switch {
		case spec.PersistentVolumeClaim != nil:
			vs.PVCRef = &statsapi.PVCReference{Name: spec.PersistentVolumeClaim.ClaimName, Namespace: pod.Namespace}
		case spec.Ephemeral != nil:
			vs.PVCRef = &statsapi.PVCReference{Name: pod.Name + "-" + spec.Name, Namespace: pod.Namespace}
		}
		out = append(out, vs)
	}
	return out
}

// measureVolume is a local PV's filesystem (statfs), or the walk of a volume's directory with
// the capacity and free space of the filesystem it is on (upstream MetricsDu: used bytes and
// inodes from the walk, the rest from statfs).
func measureVolume(mv MountedVolume, now metav1.Time) (*statsapi.FsStats, error) {
	fsStats, err := statfs(mv.Path, now)
	if err != nil || mv.WholeFS {
		return fsStats, err
	}
	bytes, inodes, err := diskUsage(mv.Path)
	if err != nil {
		return nil, err
	}
	fsStats.UsedBytes, fsStats.InodesUsed = ptr.To(bytes), ptr.To(inodes)
	return fsStats, nil
}

// diskUsage is what `du` counts under dir (upstream pkg/volume/util/fs DiskUsage): the blocks
// allocated to every file and directory (512-byte units), and the number of inodes, a hard link
// counted once. Symlinks are not followed.
func diskUsage(dir string) (bytes, inodes uint64, err error) {
	seen := map[uint64]bool{}
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // removed while we walk: counts as nothing
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // removed while we walk: counts as nothing
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || seen[st.Ino] {
			return nil
		}
		seen[st.Ino] = true
		inodes++
		bytes += uint64(st.Blocks) * 512 //nolint:gosec // a block count is never negative
		return nil
	})
	return bytes, inodes, err
}

// isLocalEphemeralVolume reports whether a volume's usage counts in the pod's ephemeral storage
// (upstream util.IsLocalEphemeralVolume): gitRepo, emptyDir on disk, configMap.
func isLocalEphemeralVolume(v corev1.Volume) bool {
	return v.GitRepo != nil || (v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumDefault) || v.ConfigMap != nil
}

// addVolumes gives each pod its volumes' last figures, and adds its local ephemeral volumes'
// usage to its EphemeralStorage (upstream calcEphemeralStorage).
func addVolumes(pods []statsapi.PodStats, specs map[string]*corev1.Pod, v *VolumeStats) {
	if v == nil {
		return
	}
	for i := range pods {
		ps := &pods[i]
		vols := v.ForPod(types.UID(ps.PodRef.UID))
		if len(vols) == 0 {
			continue
		}
		ps.VolumeStats = slices.Clone(vols)
		pod := specs[ps.PodRef.UID]
		if pod == nil || ps.EphemeralStorage == nil {
			continue
		}
		for _, vs := range vols {
			i := slices.IndexFunc(pod.Spec.Volumes, func(s corev1.Volume) bool { return s.Name == vs.Name })
			if i < 0 || !isLocalEphemeralVolume(pod.Spec.Volumes[i]) {
				continue
			}
			*ps.EphemeralStorage.UsedBytes += ptr.Deref(vs.UsedBytes, 0)
			*ps.EphemeralStorage.InodesUsed += ptr.Deref(vs.InodesUsed, 0)
		}
	}
}

// pvcKey names a claim once, for the metrics: several pods may mount one claim.
func pvcKey(r *statsapi.PVCReference) string { return r.Namespace + "/" + r.Name }

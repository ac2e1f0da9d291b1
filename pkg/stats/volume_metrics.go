package stats

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// kubelet_volume_stats_* on /metrics: the figures of claim-backed volumes, one series per claim
// (namespace, persistentvolumeclaim) however many pods mount it (upstream:
// pkg/kubelet/metrics/collectors/volume_stats.go). They come from the last volume stats turn,
// so a scrape costs no walk and no CRI call.
var (
	volumeLabels                  = []string{"namespace", "persistentvolumeclaim"}
	volumeStatsCapacityBytesDesc  = prometheus.NewDesc("kubelet_volume_stats_capacity_bytes", "[ALPHA] Capacity in bytes of the volume", volumeLabels, nil)
	volumeStatsAvailableBytesDesc = prometheus.NewDesc("kubelet_volume_stats_available_bytes", "[ALPHA] Number of available bytes in the volume", volumeLabels, nil)
	volumeStatsUsedBytesDesc      = prometheus.NewDesc("kubelet_volume_stats_used_bytes", "[ALPHA] Number of used bytes in the volume", volumeLabels, nil)
	volumeStatsInodesDesc         = prometheus.NewDesc("kubelet_volume_stats_inodes", "[ALPHA] Maximum number of inodes in the volume", volumeLabels, nil)
	volumeStatsInodesFreeDesc     = prometheus.NewDesc("kubelet_volume_stats_inodes_free", "[ALPHA] Number of free inodes in the volume", volumeLabels, nil)
	volumeStatsInodesUsedDesc     = prometheus.NewDesc("kubelet_volume_stats_inodes_used", "[ALPHA] Number of used inodes in the volume", volumeLabels, nil)
)

// VolumeMetrics is the kubelet_volume_stats_* collector over a VolumeStats.
type VolumeMetrics struct{ v *VolumeStats }

var _ prometheus.Collector = VolumeMetrics{}

// NewVolumeMetrics returns the collector of v's claim-backed volumes.
func NewVolumeMetrics(v *VolumeStats) VolumeMetrics { return VolumeMetrics{v: v} }

// Describe sends every metric's description.
func (m VolumeMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{volumeStatsCapacityBytesDesc, volumeStatsAvailableBytesDesc, volumeStatsUsedBytesDesc,
		volumeStatsInodesDesc, volumeStatsInodesFreeDesc, volumeStatsInodesUsedDesc} {
		ch <- d
	}
}

// Collect sends the last turn's figures.
func (m VolumeMetrics) Collect(ch chan<- prometheus.Metric) {
	m.v.mu.Lock()
	pods := maps.Clone(m.v.pods) // a turn replaces the map and never modifies the slices
	m.v.mu.Unlock()
	for _, metric := range volumeMetrics(pods) {
		ch <- metric
	}
}

// volumeMetrics converts claim-backed volumes' figures into samples, once per claim (the pods are
// taken in UID order, so the same claim always reports the same pod's figures). Pure.
func volumeMetrics(pods map[types.UID][]statsapi.VolumeStats) []prometheus.Metric {
	var out []prometheus.Metric
	seen := map[string]bool{}
	uids := make([]types.UID, 0, len(pods))
	for uid := range pods {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		for _, vs := range pods[uid] {
			if vs.PVCRef == nil || seen[pvcKey(vs.PVCRef)] {
				continue
			}
			seen[pvcKey(vs.PVCRef)] = true
			for _, g := range []struct {
				desc *prometheus.Desc
				v    *uint64
			}{
				{volumeStatsCapacityBytesDesc, vs.CapacityBytes}, {volumeStatsAvailableBytesDesc, vs.AvailableBytes},
				{volumeStatsUsedBytesDesc, vs.UsedBytes}, {volumeStatsInodesDesc, vs.Inodes},
				{volumeStatsInodesFreeDesc, vs.InodesFree}, {volumeStatsInodesUsedDesc, vs.InodesUsed},
			} {
				out = append(out, prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(ptr.Deref(g.v, 0)), vs.PVCRef.Namespace, vs.PVCRef.Name))
			}
		}
	}
	return out
}

package stats

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// volumePod has an emptyDir, a claim, a generic ephemeral volume and a hostPath; the
// hostPath is not measurable (upstream MetricsNil), so the kubelet never hands it over.
func volumePod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db"}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
	}}}
}

// The volume stats loop (upstream fsResourceAnalyzer): each turn walks an emptyDir as du does
// (allocated blocks, inodes of files and directories), measures a local PV by statfs, gives
// claim-backed volumes their PVCRef, and keeps the figures until the next turn: a file written
// between turns is not seen before the period has passed.
func TestVolumeStatsUpdate(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	cache, pv := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cache, "a"), make([]byte, 100<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	pod := volumePod()
	clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	vs, err := NewVolumeStats(VolumeStatsConfig{
		Pods: func() []*corev1.Pod { return []*corev1.Pod{pod} },
		Volumes: func(types.UID) map[string]MountedVolume {
			return map[string]MountedVolume{"cache": {Path: cache}, "data": {Path: pv, WholeFS: true}, "scratch": {Path: cache}}
		},
		Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	vs.Update(ctx)
	got := vs.ForPod("u1")
	if len(got) != 3 || got[0].Name != "cache" || got[1].Name != "data" || got[2].Name != "scratch" {
		t.Fatalf("volumes %+v, want cache, data and scratch", got)
	}
	if used := *got[0].UsedBytes; used < 100<<10 || used > 120<<10 {
		t.Errorf("cache usedBytes %d, want about 100 KiB (the file's blocks and the directory's)", used)
	}
	if *got[0].InodesUsed != 2 || got[0].PVCRef != nil || *got[0].CapacityBytes == 0 {
		t.Errorf("cache %+v: want 2 inodes (dir and file), no PVCRef, the filesystem's capacity", got[0])
	}
	if r := got[1].PVCRef; r == nil || *r != (statsapi.PVCReference{Name: "db", Namespace: "ns"}) {
		t.Errorf("data PVCRef %+v, want ns/db", r)
	}
	if d := got[1]; *d.UsedBytes == 0 || *d.CapacityBytes <= *d.UsedBytes || *d.InodesUsed == 0 {
		t.Errorf("data (statfs) %+v: want the filesystem's used bytes", got[1])
	}
	if r := got[2].PVCRef; r == nil || r.Name != "web-scratch" {
		t.Errorf("scratch PVCRef %+v, want the generic ephemeral volume's claim web-scratch", r)
	}

	if err := os.WriteFile(filepath.Join(cache, "b"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if again := vs.ForPod("u1"); *again[0].UsedBytes != *got[0].UsedBytes {
		t.Errorf("usage changed without a turn: %d, was %d", *again[0].UsedBytes, *got[0].UsedBytes)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { vs.Run(runCtx); close(done) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(DefaultVolumeStatsAggPeriod) // one minute: the next turn
	deadline := time.Now().Add(10 * time.Second)
	for *vs.ForPod("u1")[0].UsedBytes < 1<<20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if used := *vs.ForPod("u1")[0].UsedBytes; used < 1<<20 {
		t.Errorf("cache usedBytes %d after a period, want the new 1 MiB file counted", used)
	}
}

// The Summary carries the volumes, and a pod's ephemeral storage counts its emptyDir on disk and
// configMaps, not its claims (upstream calcEphemeralStorage with IsLocalEphemeralVolume).
func TestAddVolumes(t *testing.T) {
	pod := volumePod()
	vs := &VolumeStats{pods: map[types.UID][]statsapi.VolumeStats{"u1": {
		{Name: "cache", FsStats: statsapi.FsStats{UsedBytes: ptr.To[uint64](1000), InodesUsed: ptr.To[uint64](3)}},
		{Name: "data", PVCRef: &statsapi.PVCReference{Name: "db", Namespace: "ns"}, FsStats: statsapi.FsStats{UsedBytes: ptr.To[uint64](5000), InodesUsed: ptr.To[uint64](7)}},
	}}}
	pods := []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "web", Namespace: "ns", UID: "u1"},
		EphemeralStorage: &statsapi.FsStats{UsedBytes: ptr.To[uint64](10), InodesUsed: ptr.To[uint64](1)}}}
	addVolumes(pods, map[string]*corev1.Pod{"u1": pod}, vs)
	if len(pods[0].VolumeStats) != 2 {
		t.Fatalf("volume stats %+v, want both volumes", pods[0].VolumeStats)
	}
	if e := pods[0].EphemeralStorage; *e.UsedBytes != 1010 || *e.InodesUsed != 4 {
		t.Errorf("ephemeral storage %d bytes %d inodes, want 1010 and 4 (the emptyDir, not the claim)", *e.UsedBytes, *e.InodesUsed)
	}
}

// kubelet_volume_stats_* has upstream's names, help and labels, one series per claim, and nothing
// for volumes without a claim.
func TestVolumeMetricsText(t *testing.T) {
	fsStats := statsapi.FsStats{CapacityBytes: ptr.To[uint64](1000), AvailableBytes: ptr.To[uint64](600), UsedBytes: ptr.To[uint64](400),
		Inodes: ptr.To[uint64](50), InodesFree: ptr.To[uint64](45), InodesUsed: ptr.To[uint64](5)}
	claim := &statsapi.PVCReference{Name: "db", Namespace: "ns"}
	vs := &VolumeStats{pods: map[types.UID][]statsapi.VolumeStats{
		"u1": {{Name: "data", PVCRef: claim, FsStats: fsStats}, {Name: "cache", FsStats: fsStats}},
		"u2": {{Name: "shared", PVCRef: claim, FsStats: fsStats}},
	}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewVolumeMetrics(vs))
	want := `
# HELP kubelet_volume_stats_available_bytes [ALPHA] Number of available bytes in the volume
# TYPE kubelet_volume_stats_available_bytes gauge
kubelet_volume_stats_available_bytes{namespace="ns",persistentvolumeclaim="db"} 600
# HELP kubelet_volume_stats_capacity_bytes [ALPHA] Capacity in bytes of the volume
# TYPE kubelet_volume_stats_capacity_bytes gauge
kubelet_volume_stats_capacity_bytes{namespace="ns",persistentvolumeclaim="db"} 1000
# HELP kubelet_volume_stats_inodes [ALPHA] Maximum number of inodes in the volume
# TYPE kubelet_volume_stats_inodes gauge
kubelet_volume_stats_inodes{namespace="ns",persistentvolumeclaim="db"} 50
# HELP kubelet_volume_stats_inodes_free [ALPHA] Number of free inodes in the volume
# TYPE kubelet_volume_stats_inodes_free gauge
kubelet_volume_stats_inodes_free{namespace="ns",persistentvolumeclaim="db"} 45
# HELP kubelet_volume_stats_inodes_used [ALPHA] Number of used inodes in the volume
# TYPE kubelet_volume_stats_inodes_used gauge
kubelet_volume_stats_inodes_used{namespace="ns",persistentvolumeclaim="db"} 5
# HELP kubelet_volume_stats_used_bytes [ALPHA] Number of used bytes in the volume
# TYPE kubelet_volume_stats_used_bytes gauge
kubelet_volume_stats_used_bytes{namespace="ns",persistentvolumeclaim="db"} 400
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

package stats

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

func podUsing(nanoCores, workingSet, ephemeral uint64) statsapi.PodStats {
	return statsapi.PodStats{
		CPU:              &statsapi.CPUStats{UsageNanoCores: ptr.To(nanoCores)},
		Memory:           &statsapi.MemoryStats{WorkingSetBytes: ptr.To(workingSet)},
		EphemeralStorage: &statsapi.FsStats{UsedBytes: ptr.To(ephemeral), InodesUsed: ptr.To[uint64](3)},
		ProcessStats:     &statsapi.ProcessStats{ProcessCount: ptr.To[uint64](2)},
	}
}

// The fake node: memory.available = capacity − (pods' working sets + base), as upstream defines
// the eviction signal; nodefs from the ephemeral-storage capacity; its CPU time only grows.
func TestFakeNode(t *testing.T) {
	n := newFakeNode(corev1.ResourceList{
		corev1.ResourceMemory:           resource.MustParse("1Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("10Gi"),
	}, t0)
	imageFs := &runtimeapi.FilesystemUsage{UsedBytes: &runtimeapi.UInt64Value{Value: 5 << 20}}
	pods := []statsapi.PodStats{podUsing(500_000_000, 200<<20, 1<<20), podUsing(100_000_000, 100<<20, 2<<20)}

	first, err := n.stats(nodeInput{Pods: pods, ImageFs: imageFs, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	wantWS := uint64(300<<20 + fakeBaseWorkingSet)
	if ws, avail := *first.Memory.WorkingSetBytes, *first.Memory.AvailableBytes; ws != wantWS || avail != 1<<30-wantWS {
		t.Errorf("memory working set %d available %d, want %d and 1Gi − it", ws, avail, wantWS)
	}
	if nc := *first.CPU.UsageNanoCores; nc != 600_000_000+fakeBaseNanoCores {
		t.Errorf("usageNanoCores %d, want the pods' 600m + base", nc)
	}
	wantFsUsed := uint64(3<<20 + fakeBaseFsBytes)
	if fs := first.Fs; *fs.CapacityBytes != 10<<30 || *fs.UsedBytes != wantFsUsed || *fs.AvailableBytes != 10<<30-wantFsUsed {
		t.Errorf("nodefs %+v, want 10Gi capacity and %d used", fs, wantFsUsed)
	}
	if p := *first.Rlimit.NumOfRunningProcesses; p != fakeBaseProcesses+4 || *first.Rlimit.MaxPID <= 0 {
		t.Errorf("rlimit %+v, want %d processes and a MaxPID", first.Rlimit, fakeBaseProcesses+4)
	}

	// 10 s later the pods are gone; the node's CPU time has grown by 10 s at the old rate.
	later, _ := n.stats(nodeInput{ImageFs: imageFs, Now: t0.Add(10 * time.Second)})
	if got, want := *later.CPU.UsageCoreNanoSeconds, uint64(10*(600_000_000+fakeBaseNanoCores)); got != want {
		t.Errorf("CPU time after 10 s = %d, want %d", got, want)
	}
	if ws := *later.Memory.WorkingSetBytes; ws != fakeBaseWorkingSet {
		t.Errorf("working set with no pods = %d, want the base %d", ws, fakeBaseWorkingSet)
	}

	// A long gap between two Summaries (nobody scraped for an hour): rate × elapsed does not fit
	// in 64 bits, and the CPU time must still only grow.
	busy := []statsapi.PodStats{podUsing(2_000_000_000, 0, 0)}
	before, _ := n.stats(nodeInput{Pods: busy, ImageFs: imageFs, Now: t0.Add(20 * time.Second)})
	after, _ := n.stats(nodeInput{Pods: busy, ImageFs: imageFs, Now: t0.Add(20*time.Second + time.Hour)})
	if got, want := *after.CPU.UsageCoreNanoSeconds-*before.CPU.UsageCoreNanoSeconds, uint64(3600*(2_000_000_000+fakeBaseNanoCores)); got != want {
		t.Errorf("CPU time over an hour at 2 cores + base = %d, want %d", got, want)
	}
}

// The machine node reads /proc and statfs; the figures hang together.
func TestMachineNode(t *testing.T) {
	n := &machineNode{rootDir: t.TempDir()}
	s, err := n.stats(nodeInput{ImageFs: &runtimeapi.FilesystemUsage{}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ws, avail := *s.Memory.WorkingSetBytes, *s.Memory.AvailableBytes
	if ws == 0 || avail == 0 || *s.Fs.CapacityBytes == 0 || *s.CPU.UsageCoreNanoSeconds == 0 || s.StartTime.IsZero() || *s.Rlimit.NumOfRunningProcesses == 0 {
		t.Errorf("machine node %+v: want non-zero memory, fs, CPU, start time and processes", s)
	}
	if s.CPU.UsageNanoCores != nil {
		t.Errorf("usageNanoCores on the first sample = %d, want none (no previous sample)", *s.CPU.UsageNanoCores)
	}
	second, _ := n.stats(nodeInput{ImageFs: &runtimeapi.FilesystemUsage{}, Now: time.Now().Add(time.Second)})
	if second.CPU.UsageNanoCores == nil {
		t.Errorf("usageNanoCores on the second sample: none, want the rate since the first")
	}
}

func TestCPUAndMemory(t *testing.T) {
	full := &statsapi.Summary{
		Node: statsapi.NodeStats{NodeName: "n1", Memory: &statsapi.MemoryStats{}, Fs: &statsapi.FsStats{}, Rlimit: &statsapi.RlimitStats{}},
		Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "web"}, Memory: &statsapi.MemoryStats{}, EphemeralStorage: &statsapi.FsStats{},
			Containers: []statsapi.ContainerStats{{Name: "app", Memory: &statsapi.MemoryStats{}, Rootfs: &statsapi.FsStats{}}}}},
	}
	got := CPUAndMemory(full)
	if got.Node.Memory == nil || got.Node.Fs != nil || got.Node.Rlimit != nil || got.Pods[0].EphemeralStorage != nil ||
		got.Pods[0].Containers[0].Rootfs != nil || got.Pods[0].Containers[0].Memory == nil || full.Node.Fs == nil {
		t.Errorf("CPUAndMemory = %+v: want only CPU and memory, and the original untouched", got)
	}
}

package stats

import (
	"math/bits"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// nodeInput is what the node's figures are made from.
type nodeInput struct {
	Pods    []statsapi.PodStats         // this round's pods, with their EphemeralStorage used
	ImageFs *runtimeapi.FilesystemUsage // CRI ImageFsInfo
	Now     time.Time
}

// nodeSource computes Summary.Node (without NodeName). It is called under the provider's lock,
// so it may keep state between calls (a CPU counter).
type nodeSource interface {
	stats(in nodeInput) (statsapi.NodeStats, error)
}

// Made-up figures of a fake node, besides its pods': what the node's own processes (the system,
// the kubelet, the runtime) would use.
const (
	fakeBaseNanoCores  = 20_000_000 // 20m
	fakeBaseWorkingSet = 64 << 20   // 64 MiB
	fakeBaseFsBytes    = 64 << 20   // the node's own files on nodefs
	fakeBaseProcesses  = 50
	fakeBytesPerInode  = 16 << 10 // nodefs has one inode per 16 KiB of capacity
	fakeBaseInodes     = 1000
	defaultMaxPID      = 32768 // Linux's default pid_max on a small machine
)

// fakeNode makes the node's figures up from its pods and its reported capacity: nothing runs on
// a fake node, so the machine's own figures would say nothing about its pods.
type fakeNode struct {
	capacity corev1.ResourceList
	start    time.Time
	maxPID   int64 // the machine's pid_max, read once: a fake node's limits do not change
	// The node's CPU time is the integral of its rate, so that it only grows even when pods go.
	cpuNanos uint64
	cpuAt    time.Time
	cpuRate  uint64
}

// newFakeNode returns a fake node of capacity that started at start.
func newFakeNode(capacity corev1.ResourceList, start time.Time) *fakeNode {
	return &fakeNode{capacity: capacity, start: start, maxPID: readPidMax()}
}

func (n *fakeNode) stats(in nodeInput) (statsapi.NodeStats, error) {
	ts := metav1.NewTime(in.Now)
	var nanoCores, workingSet, fsUsed, inodesUsed, processes uint64 = fakeBaseNanoCores, fakeBaseWorkingSet, fakeBaseFsBytes, fakeBaseInodes, fakeBaseProcesses
	for _, p := range in.Pods {
		nanoCores += ptr.Deref(p.CPU.UsageNanoCores, 0)
		workingSet += ptr.Deref(p.Memory.WorkingSetBytes, 0)
		if p.EphemeralStorage != nil {
			fsUsed += ptr.Deref(p.EphemeralStorage.UsedBytes, 0)
			inodesUsed += ptr.Deref(p.EphemeralStorage.InodesUsed, 0)
		}
		if p.ProcessStats != nil {
			processes += ptr.Deref(p.ProcessStats.ProcessCount, 0)
		} else {
			processes += uint64(len(p.Containers))
		}
	}
	if !n.cpuAt.IsZero() && in.Now.After(n.cpuAt) {
		// rate × elapsed in 128 bits: in 64 it overflows after 37 s at 500m.
		hi, lo := bits.Mul64(n.cpuRate, uint64(in.Now.Sub(n.cpuAt)))
		if hi < uint64(time.Second) {
			since, _ := bits.Div64(hi, lo, uint64(time.Second))
			n.cpuNanos += since
		}
	}
	n.cpuAt, n.cpuRate = in.Now, nanoCores

	memCapacity := quantity(n.capacity, corev1.ResourceMemory)
	fsCapacity := quantity(n.capacity, corev1.ResourceEphemeralStorage)
	inodes := fsCapacity / fakeBytesPerInode
	nodeFs := &statsapi.FsStats{Time: ts, CapacityBytes: ptr.To(fsCapacity), UsedBytes: ptr.To(fsUsed),
		AvailableBytes: ptr.To(sub(fsCapacity, fsUsed)), Inodes: ptr.To(inodes), InodesUsed: ptr.To(inodesUsed),
		InodesFree: ptr.To(sub(inodes, inodesUsed))}
	imageUsed := in.ImageFs.GetUsedBytes().GetValue()
	imageFs := &statsapi.FsStats{Time: ts, CapacityBytes: ptr.To(fsCapacity), UsedBytes: ptr.To(imageUsed),
		AvailableBytes: ptr.To(sub(fsCapacity, fsUsed+imageUsed)), Inodes: ptr.To(inodes),
		InodesUsed: ptr.To(in.ImageFs.GetInodesUsed().GetValue()), InodesFree: ptr.To(sub(inodes, inodesUsed))}
	return statsapi.NodeStats{
		StartTime: metav1.NewTime(n.start),
		CPU:       &statsapi.CPUStats{Time: ts, UsageNanoCores: ptr.To(nanoCores), UsageCoreNanoSeconds: ptr.To(n.cpuNanos)},
		Memory: &statsapi.MemoryStats{Time: ts, WorkingSetBytes: ptr.To(workingSet), UsageBytes: ptr.To(workingSet),
			RSSBytes: ptr.To(workingSet / 2), AvailableBytes: ptr.To(sub(memCapacity, workingSet))},
		Fs:      nodeFs,
		Runtime: &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: imageFs},
		Rlimit:  &statsapi.RlimitStats{Time: ts, MaxPID: ptr.To(n.maxPID), NumOfRunningProcesses: ptr.To(int64(processes))},
	}, nil
}

// quantity is a resource's amount in its base unit (bytes), 0 if absent.
func quantity(list corev1.ResourceList, name corev1.ResourceName) uint64 {
	q, ok := list[name]
	if !ok || q.Sign() < 0 {
		return 0
	}
	return uint64(q.Value())
}

// sub is a − b, or 0 if b is larger.
func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

package stats

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// criInput is one round of CRI answers and what the conversion needs besides.
type criInput struct {
	Sandboxes      []*runtimeapi.PodSandbox
	Containers     []*runtimeapi.Container
	ContainerStats []*runtimeapi.ContainerStats
	SandboxStats   []*runtimeapi.PodSandboxStats // nil: the runtime lacks ListPodSandboxStats
	Known          map[string]bool               // UIDs of the pods the kubelet knows
	Previous       map[string]cpuSample          // last CPU sample per container ID
	Now            time.Time
}

// cpuSample is a container's cumulative CPU time at a time, to compute a rate from the next one
// when the runtime reports none (upstream: getAndUpdateContainerUsageNanoCores).
type cpuSample struct {
	at    int64 // Unix nanoseconds
	nanos uint64
}

// nanoCoresSince is the CPU rate from prev to s in nanocores; nil if prev is not older or has
// more CPU time (the counter restarted).
func (s cpuSample) nanoCoresSince(prev cpuSample) *uint64 {
	if s.at <= prev.at || s.nanos < prev.nanos {
		return nil
	}
	return ptr.To(uint64(float64(s.nanos-prev.nanos) / float64(s.at-prev.at) * float64(time.Second)))
}

// podStatsFromCRI converts CRI sandboxes, containers and their stats into the Summary's pods
// (upstream: listPodStatsStrictlyFromCRI, makeContainerStats, removeTerminatedPods,
// removeTerminatedContainers). Pure: it returns the pods, sorted by namespace and name, and the
// CPU samples for the next round. A pod's sandbox is its READY one, else its newest; its
// containers are the RUNNING ones, the newest per name. Pod CPU, memory, processes and network
// come from the sandbox's stats, or are the sums of its containers' when the runtime has none.
func podStatsFromCRI(in criInput) ([]statsapi.PodStats, map[string]cpuSample) {
	sandboxes := map[string]*runtimeapi.PodSandbox{} // by pod UID
	for _, s := range in.Sandboxes {
		uid := s.GetMetadata().GetUid()
		if !in.Known[uid] {
			continue
		}
		cur := sandboxes[uid]
		switch {
		case cur == nil,
			s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY && cur.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY,
			s.GetState() == cur.GetState() && s.GetCreatedAt() > cur.GetCreatedAt():
			sandboxes[uid] = s
		}
	}
	bySandbox := map[string]*runtimeapi.PodSandbox{}
	for _, s := range sandboxes {
		bySandbox[s.GetId()] = s
	}

	containers := map[string]*runtimeapi.Container{} // by sandbox ID + "/" + name: the newest RUNNING one
	for _, c := range in.Containers {
		if c.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || bySandbox[c.GetPodSandboxId()] == nil {
			continue
		}
		key := c.GetPodSandboxId() + "/" + c.GetMetadata().GetName()
		if cur := containers[key]; cur == nil || c.GetCreatedAt() > cur.GetCreatedAt() {
			containers[key] = c
		}
	}
	chosen := map[string]*runtimeapi.Container{} // by container ID
	for _, c := range containers {
		chosen[c.GetId()] = c
	}

	pods := map[string]*statsapi.PodStats{} // by sandbox ID
	for id, s := range bySandbox {
		m := s.GetMetadata()
		pods[id] = &statsapi.PodStats{
			PodRef:     statsapi.PodReference{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUid()},
			StartTime:  timeOf(s.GetCreatedAt(), in.Now),
			Containers: []statsapi.ContainerStats{},
		}
	}
	samples := map[string]cpuSample{}
	for _, cs := range in.ContainerStats {
		c := chosen[cs.GetAttributes().GetId()]
		if c == nil {
			continue
		}
		ps := pods[c.GetPodSandboxId()]
		ps.Containers = append(ps.Containers, containerStats(cs, c, in.Previous, samples, in.Now))
	}

	sandboxStats := map[string]*runtimeapi.PodSandboxStats{}
	for _, ss := range in.SandboxStats {
		sandboxStats[ss.GetAttributes().GetId()] = ss
	}
	out := make([]statsapi.PodStats, 0, len(pods))
	for id, ps := range pods {
		slices.SortFunc(ps.Containers, func(a, b statsapi.ContainerStats) int { return cmp.Compare(a.Name, b.Name) })
		sumContainers(ps, in.Now)
		if linux := sandboxStats[id].GetLinux(); linux != nil {
			fromSandbox(ps, linux)
		}
		out = append(out, *ps)
	}
	slices.SortFunc(out, func(a, b statsapi.PodStats) int {
		return cmp.Or(cmp.Compare(a.PodRef.Namespace, b.PodRef.Namespace), cmp.Compare(a.PodRef.Name, b.PodRef.Name))
	})
	return out, samples
}

// containerStats converts one container's CRI stats. usageNanoCores is the runtime's, or the
// rate since the previous sample; samples gets this one.
func containerStats(cs *runtimeapi.ContainerStats, c *runtimeapi.Container, prev, samples map[string]cpuSample, now time.Time) statsapi.ContainerStats {
	out := statsapi.ContainerStats{
		Name:      c.GetMetadata().GetName(),
		StartTime: timeOf(c.GetCreatedAt(), now), // upstream: the container's creation time
		CPU:       &statsapi.CPUStats{Time: timeOf(cs.GetCpu().GetTimestamp(), now)},
		Memory:    &statsapi.MemoryStats{Time: timeOf(cs.GetMemory().GetTimestamp(), now)},
		Rootfs:    &statsapi.FsStats{Time: timeOf(cs.GetWritableLayer().GetTimestamp(), now)},
	}
	cpu := cs.GetCpu()
	sample := cpuSample{at: cpu.GetTimestamp(), nanos: cpu.GetUsageCoreNanoSeconds().GetValue()}
	out.CPU.UsageCoreNanoSeconds = ptr.To(sample.nanos)
	if cpu.GetUsageNanoCores() != nil {
		out.CPU.UsageNanoCores = ptr.To(cpu.GetUsageNanoCores().GetValue())
	} else if p, ok := prev[c.GetId()]; ok {
		out.CPU.UsageNanoCores = sample.nanoCoresSince(p)
	}
	if cpu.GetUsageCoreNanoSeconds() != nil {
		samples[c.GetId()] = sample
	}
	mem := cs.GetMemory()
	out.Memory.WorkingSetBytes = ptr.To(mem.GetWorkingSetBytes().GetValue())
	out.Memory.UsageBytes = value(mem.GetUsageBytes())
	out.Memory.RSSBytes = value(mem.GetRssBytes())
	out.Memory.AvailableBytes = value(mem.GetAvailableBytes())
	out.Memory.PageFaults = value(mem.GetPageFaults())
	out.Memory.MajorPageFaults = value(mem.GetMajorPageFaults())
	out.Rootfs.UsedBytes = ptr.To(cs.GetWritableLayer().GetUsedBytes().GetValue())
	out.Rootfs.InodesUsed = ptr.To(cs.GetWritableLayer().GetInodesUsed().GetValue())
	return out
}

// sumContainers sets the pod's CPU and memory to the sums of its containers' (upstream's
// fallback in addPodCPUMemoryStats).
func sumContainers(ps *statsapi.PodStats, now time.Time) {
	ps.CPU = &statsapi.CPUStats{Time: metav1.NewTime(now), UsageNanoCores: ptr.To[uint64](0), UsageCoreNanoSeconds: ptr.To[uint64](0)}
	ps.Memory = &statsapi.MemoryStats{Time: metav1.NewTime(now), WorkingSetBytes: ptr.To[uint64](0), UsageBytes: ptr.To[uint64](0), RSSBytes: ptr.To[uint64](0)}
	for _, c := range ps.Containers {
		ps.CPU.Time, ps.Memory.Time = c.CPU.Time, c.Memory.Time
		*ps.CPU.UsageNanoCores += ptr.Deref(c.CPU.UsageNanoCores, 0)
		*ps.CPU.UsageCoreNanoSeconds += ptr.Deref(c.CPU.UsageCoreNanoSeconds, 0)
		*ps.Memory.WorkingSetBytes += ptr.Deref(c.Memory.WorkingSetBytes, 0)
		*ps.Memory.UsageBytes += ptr.Deref(c.Memory.UsageBytes, 0)
		*ps.Memory.RSSBytes += ptr.Deref(c.Memory.RSSBytes, 0)
	}
}

// fromSandbox takes what the sandbox's own stats report (the pod cgroup: it includes the pause
// container and overhead) over the containers' sums.
func fromSandbox(ps *statsapi.PodStats, linux *runtimeapi.LinuxPodSandboxStats) {
	if cpu := linux.GetCpu(); cpu != nil && cpu.GetUsageCoreNanoSeconds() != nil {
		ps.CPU.Time = timeOf(cpu.GetTimestamp(), ps.CPU.Time.Time)
		ps.CPU.UsageCoreNanoSeconds = ptr.To(cpu.GetUsageCoreNanoSeconds().GetValue())
		if cpu.GetUsageNanoCores() != nil {
			ps.CPU.UsageNanoCores = ptr.To(cpu.GetUsageNanoCores().GetValue())
		}
	}
	if mem := linux.GetMemory(); mem != nil && mem.GetWorkingSetBytes() != nil {
		ps.Memory = &statsapi.MemoryStats{
			Time:            timeOf(mem.GetTimestamp(), ps.Memory.Time.Time),
			WorkingSetBytes: ptr.To(mem.GetWorkingSetBytes().GetValue()),
			UsageBytes:      value(mem.GetUsageBytes()),
			RSSBytes:        value(mem.GetRssBytes()),
			AvailableBytes:  value(mem.GetAvailableBytes()),
			PageFaults:      value(mem.GetPageFaults()),
			MajorPageFaults: value(mem.GetMajorPageFaults()),
		}
	}
	if p := linux.GetProcess(); p.GetProcessCount() != nil {
		ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: ptr.To(p.GetProcessCount().GetValue())}
	}
	if n := linux.GetNetwork(); n != nil {
		ps.Network = &statsapi.NetworkStats{Time: timeOf(n.GetTimestamp(), ps.CPU.Time.Time), InterfaceStats: iface(n.GetDefaultInterface())}
		for _, i := range n.GetInterfaces() {
			ps.Network.Interfaces = append(ps.Network.Interfaces, iface(i))
		}
	}
}

func iface(i *runtimeapi.NetworkInterfaceUsage) statsapi.InterfaceStats {
	return statsapi.InterfaceStats{Name: i.GetName(), RxBytes: value(i.GetRxBytes()), RxErrors: value(i.GetRxErrors()),
		TxBytes: value(i.GetTxBytes()), TxErrors: value(i.GetTxErrors())}
}

// value is a CRI optional number as the Summary's optional number.
func value(v *runtimeapi.UInt64Value) *uint64 {
	if v == nil {
		return nil
	}
	return ptr.To(v.GetValue())
}

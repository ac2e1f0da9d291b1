package fakeruntime

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"time"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Fake resource usage is made up but stable, plus what the program asks for (usage.go): each
// running container has a base CPU rate and working set derived from its ID, to which alloc and
// burn add; its CPU time grows with its rate while it runs.

// usageSeed is a stable pseudo-random number for a hex ID.
func usageSeed(id string) uint64 {
	b, err := hex.DecodeString(id[:min(16, len(id))])
	if err != nil || len(b) < 8 {
		return 7
	}
	return binary.BigEndian.Uint64(b)
}

// baseNanoCores is the CPU a running container uses before any burn: 1m–50m.
func baseNanoCores(id string) uint64 { return (1 + usageSeed(id)%50) * 1_000_000 }

// baseWorkingSet is the memory a running container uses before any alloc: 4–63 MiB, and at most
// half its memory limit, so a small limit is not exceeded by the base alone.
func baseWorkingSet(id string, limit uint64) uint64 {
	ws := (4 + usageSeed(id)%60) << 20
	if limit > 0 {
		ws = min(ws, limit/2)
	}
	return ws
}

func (r *Runtime) containerStatsLocked(c *container, now time.Time) *runtimeapi.ContainerStats {
	seed := usageSeed(c.id)
	workingSet := c.workingSet()
	layerBytes, layerInodes := c.fs.usage()
	ts := now.UnixNano()
	stats := &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: c.id, Metadata: c.config.GetMetadata(),
			Labels: c.config.GetLabels(), Annotations: c.config.GetAnnotations()},
		Cpu: &runtimeapi.CpuUsage{
			Timestamp:            ts,
			UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: c.cpuNanosAt(now)},
			UsageNanoCores:       &runtimeapi.UInt64Value{Value: c.cpuRate()},
		},
		Memory: &runtimeapi.MemoryUsage{
			Timestamp:       ts,
			WorkingSetBytes: &runtimeapi.UInt64Value{Value: workingSet},
			UsageBytes:      &runtimeapi.UInt64Value{Value: workingSet + workingSet/16},
			RssBytes:        &runtimeapi.UInt64Value{Value: workingSet / 2},
			PageFaults:      &runtimeapi.UInt64Value{Value: seed % 10_000},
		},
		WritableLayer: &runtimeapi.FilesystemUsage{
			Timestamp:  ts,
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMountpoint},
			UsedBytes:  &runtimeapi.UInt64Value{Value: layerBytes},
			InodesUsed: &runtimeapi.UInt64Value{Value: layerInodes},
		},
	}
	if limit := c.memoryLimit(); limit > 0 && workingSet < limit {
		stats.Memory.AvailableBytes = &runtimeapi.UInt64Value{Value: limit - workingSet}
	}
	return proto.Clone(stats).(*runtimeapi.ContainerStats) // the caller may keep it
}

func (r *Runtime) sandboxStatsLocked(s *sandbox, now time.Time) *runtimeapi.PodSandboxStats {
	ts := now.UnixNano()
	var cores, cpuSeconds, workingSet, processes uint64
	linux := &runtimeapi.LinuxPodSandboxStats{}
	for _, c := range sorted(r.containers) {
		if c.sandboxID != s.id {
			continue
		}
		cs := r.containerStatsLocked(c, now)
		linux.Containers = append(linux.Containers, cs)
		cores += cs.GetCpu().GetUsageNanoCores().GetValue()
		cpuSeconds += cs.GetCpu().GetUsageCoreNanoSeconds().GetValue()
		if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			workingSet += cs.GetMemory().GetWorkingSetBytes().GetValue()
			processes++
		}
	}
	seed := usageSeed(s.id)
	alive := uint64(now.Sub(s.createdAt) / time.Second)
	linux.Cpu = &runtimeapi.CpuUsage{Timestamp: ts, UsageNanoCores: &runtimeapi.UInt64Value{Value: cores}, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: cpuSeconds}}
	linux.Memory = &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: &runtimeapi.UInt64Value{Value: workingSet + 512<<10}}
	linux.Process = &runtimeapi.ProcessUsage{Timestamp: ts, ProcessCount: &runtimeapi.UInt64Value{Value: processes + 1}}
	if !s.hostNetwork() {
		linux.Network = &runtimeapi.NetworkUsage{Timestamp: ts, DefaultInterface: &runtimeapi.NetworkInterfaceUsage{
			Name:    "eth0",
			RxBytes: &runtimeapi.UInt64Value{Value: alive * (100 + seed%900)},
			TxBytes: &runtimeapi.UInt64Value{Value: alive * (50 + seed%450)},
		}}
	}
	attributes := &runtimeapi.PodSandboxAttributes{Id: s.id, Metadata: s.config.GetMetadata(),
		Labels: s.config.GetLabels(), Annotations: s.config.GetAnnotations()}
	return &runtimeapi.PodSandboxStats{Attributes: proto.Clone(attributes).(*runtimeapi.PodSandboxAttributes), Linux: linux}
}

// ContainerStats reports made-up usage of one container.
func (r *Runtime) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatsResponse{Stats: r.containerStatsLocked(c, r.clock.Now())}, nil
}

// ListContainerStats reports usage of the containers that match the filter.
func (r *Runtime) ListContainerStats(_ context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, f := r.clock.Now(), req.GetFilter()
	keep := func(c *container) bool { return c.matches(f.GetId(), f.GetPodSandboxId(), nil, f.GetLabelSelector()) }
	stats := func(c *container) *runtimeapi.ContainerStats { return r.containerStatsLocked(c, now) }
	return &runtimeapi.ListContainerStatsResponse{Stats: list(r.containers, keep, stats)}, nil
}

// PodSandboxStats reports made-up usage of one sandbox and its containers.
func (r *Runtime) PodSandboxStats(_ context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.sandboxLocked(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: r.sandboxStatsLocked(s, r.clock.Now())}, nil
}

// ListPodSandboxStats reports usage of the sandboxes that match the filter.
func (r *Runtime) ListPodSandboxStats(_ context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, f := r.clock.Now(), req.GetFilter()
	keep := func(s *sandbox) bool { return s.matches(f.GetId(), nil, f.GetLabelSelector()) }
	stats := func(s *sandbox) *runtimeapi.PodSandboxStats { return r.sandboxStatsLocked(s, now) }
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: list(r.sandboxes, keep, stats)}, nil
}

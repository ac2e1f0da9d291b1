package stats

import (
	"slices"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sandbox(id, uid, name string, state runtimeapi.PodSandboxState, created int64) *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{Id: id, State: state, CreatedAt: created,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: uid}}
}

func ctr(id, sandboxID, name string, state runtimeapi.ContainerState, created int64) *runtimeapi.Container {
	return &runtimeapi.Container{Id: id, PodSandboxId: sandboxID, State: state, CreatedAt: created,
		Metadata: &runtimeapi.ContainerMetadata{Name: name}}
}

// cstats is a container's CRI stats; nanoCores < 0 leaves usageNanoCores out (as a runtime may).
func cstats(id string, at int64, cpuNanos uint64, nanoCores int64, workingSet uint64) *runtimeapi.ContainerStats {
	s := &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: id},
		Cpu:        &runtimeapi.CpuUsage{Timestamp: at, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: cpuNanos}},
		Memory:     &runtimeapi.MemoryUsage{Timestamp: at, WorkingSetBytes: &runtimeapi.UInt64Value{Value: workingSet}},
		WritableLayer: &runtimeapi.FilesystemUsage{Timestamp: at, UsedBytes: &runtimeapi.UInt64Value{Value: 4096},
			InodesUsed: &runtimeapi.UInt64Value{Value: 1}},
	}
	if nanoCores >= 0 {
		s.Cpu.UsageNanoCores = &runtimeapi.UInt64Value{Value: uint64(nanoCores)}
	}
	return s
}

type podWant struct {
	name       string
	containers []string
	workingSet uint64
	nanoCores  uint64
	processes  *uint64
}

func TestPodStatsFromCRI(t *testing.T) {
	ready, notReady := runtimeapi.PodSandboxState_SANDBOX_READY, runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	running, exited := runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_EXITED
	now := t0.UnixNano()
	for _, tc := range []struct {
		name string
		in   criInput
		want []podWant
	}{{
		name: "no ListPodSandboxStats: the pod is the sum of its running containers",
		in: criInput{
			Sandboxes:      []*runtimeapi.PodSandbox{sandbox("s1", "u1", "web", ready, 1)},
			Containers:     []*runtimeapi.Container{ctr("c1", "s1", "app", running, 2), ctr("c2", "s1", "sidecar", running, 3)},
			ContainerStats: []*runtimeapi.ContainerStats{cstats("c1", now, 10, 100, 1000), cstats("c2", now, 20, 200, 2000)},
			Known:          map[string]bool{"u1": true},
		},
		want: []podWant{{name: "web", containers: []string{"app", "sidecar"}, workingSet: 3000, nanoCores: 300}},
	}, {
		name: "sandbox stats win over the sums: the pod cgroup includes more",
		in: criInput{
			Sandboxes:      []*runtimeapi.PodSandbox{sandbox("s1", "u1", "web", ready, 1)},
			Containers:     []*runtimeapi.Container{ctr("c1", "s1", "app", running, 2)},
			ContainerStats: []*runtimeapi.ContainerStats{cstats("c1", now, 10, 100, 1000)},
			SandboxStats: []*runtimeapi.PodSandboxStats{{Attributes: &runtimeapi.PodSandboxAttributes{Id: "s1"}, Linux: &runtimeapi.LinuxPodSandboxStats{
				Cpu:     &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 11}, UsageNanoCores: &runtimeapi.UInt64Value{Value: 110}},
				Memory:  &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: &runtimeapi.UInt64Value{Value: 1500}},
				Process: &runtimeapi.ProcessUsage{Timestamp: now, ProcessCount: &runtimeapi.UInt64Value{Value: 2}},
			}}},
			Known: map[string]bool{"u1": true},
		},
		want: []podWant{{name: "web", containers: []string{"app"}, workingSet: 1500, nanoCores: 110, processes: ptr.To[uint64](2)}},
	}, {
		name: "pods the kubelet does not know are left out",
		in: criInput{
			Sandboxes:      []*runtimeapi.PodSandbox{sandbox("s1", "u1", "web", ready, 1), sandbox("s2", "u2", "stranger", ready, 1)},
			Containers:     []*runtimeapi.Container{ctr("c1", "s1", "app", running, 2), ctr("c2", "s2", "app", running, 2)},
			ContainerStats: []*runtimeapi.ContainerStats{cstats("c1", now, 10, 100, 1000), cstats("c2", now, 10, 100, 1000)},
			Known:          map[string]bool{"u1": true},
		},
		want: []podWant{{name: "web", containers: []string{"app"}, workingSet: 1000, nanoCores: 100}},
	}, {
		name: "the READY sandbox, its running containers, the newest per name",
		in: criInput{
			Sandboxes: []*runtimeapi.PodSandbox{sandbox("old", "u1", "web", notReady, 1), sandbox("new", "u1", "web", ready, 5)},
			Containers: []*runtimeapi.Container{ctr("c0", "old", "app", exited, 2), ctr("c1", "new", "app", exited, 6),
				ctr("c2", "new", "app", running, 7), ctr("c3", "new", "done", exited, 6)},
			ContainerStats: []*runtimeapi.ContainerStats{cstats("c0", now, 1, 1, 1), cstats("c1", now, 1, 1, 1),
				cstats("c2", now, 10, 100, 1000), cstats("c3", now, 1, 1, 1)},
			Known: map[string]bool{"u1": true},
		},
		want: []podWant{{name: "web", containers: []string{"app"}, workingSet: 1000, nanoCores: 100}},
	}, {
		name: "no usageNanoCores from the runtime: the rate since the previous sample",
		in: criInput{
			Sandboxes:      []*runtimeapi.PodSandbox{sandbox("s1", "u1", "web", ready, 1)},
			Containers:     []*runtimeapi.Container{ctr("c1", "s1", "app", running, 2)},
			ContainerStats: []*runtimeapi.ContainerStats{cstats("c1", now, 3_000_000_000, -1, 1000)},
			Previous:       map[string]cpuSample{"c1": {at: now - 2*int64(time.Second), nanos: 2_000_000_000}},
			Known:          map[string]bool{"u1": true},
		},
		want: []podWant{{name: "web", containers: []string{"app"}, workingSet: 1000, nanoCores: 500_000_000}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = t0
			got, samples := podStatsFromCRI(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("%d pods, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				p := got[i]
				var names []string
				for _, c := range p.Containers {
					names = append(names, c.Name)
				}
				if p.PodRef.Name != w.name || p.PodRef.Namespace != "ns" || !slices.Equal(names, w.containers) {
					t.Errorf("pod %s/%s containers %v, want ns/%s %v", p.PodRef.Namespace, p.PodRef.Name, names, w.name, w.containers)
				}
				if ws := ptr.Deref(p.Memory.WorkingSetBytes, 0); ws != w.workingSet {
					t.Errorf("pod working set %d, want %d", ws, w.workingSet)
				}
				if nc := ptr.Deref(p.CPU.UsageNanoCores, 0); nc != w.nanoCores {
					t.Errorf("pod usageNanoCores %d, want %d", nc, w.nanoCores)
				}
				if !equalPtr(processCount(p), w.processes) {
					t.Errorf("pod processes %v, want %v", processCount(p), w.processes)
				}
			}
			for _, p := range got {
				for _, c := range p.Containers {
					if c.StartTime.IsZero() || c.Rootfs == nil || ptr.Deref(c.Rootfs.UsedBytes, 0) != 4096 {
						t.Errorf("container %s: start %v rootfs %+v, want a start time and its writable layer", c.Name, c.StartTime, c.Rootfs)
					}
				}
			}
			if len(samples) == 0 {
				t.Errorf("no CPU samples kept for the next round")
			}
		})
	}
}

func processCount(p statsapi.PodStats) *uint64 {
	if p.ProcessStats == nil {
		return nil
	}
	return p.ProcessStats.ProcessCount
}

func equalPtr(a, b *uint64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

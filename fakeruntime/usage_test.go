package fakeruntime

import (
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func (e *testEnv) stats(t *testing.T, id string) *runtimeapi.ContainerStats {
	t.Helper()
	resp, err := e.rs.ContainerStats(e.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStats()
}

// runLimited starts a container "app" running `sh -c script` under the resource limits res, in a
// new runtime, and returns the runtime and the container's ID.
func runLimited(t *testing.T, script string, res *runtimeapi.LinuxContainerResources) (*testEnv, string) {
	t.Helper()
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	cfg := containerConfig("app", "sh", "-c", script)
	cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: res}
	id := e.createContainer(t, sb, cfg)
	e.startContainer(t, id)
	return e, id
}

// alloc grows the working set by its quantity and burn adds a CPU rate; both end when the
// container exits (its memory is freed, its CPU time stops growing).
func TestAllocAndBurn(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	plain := e.createContainer(t, sb, containerConfig("plain", "sleep", "infinity"))
	busy := e.createContainer(t, sb, containerConfig("busy", "sh", "-c", "alloc 200Mi; burn 500m; sleep 20"))
	e.startContainer(t, plain)
	e.startContainer(t, busy)
	e.clock.Step(10 * time.Second)

	base := baseWorkingSet(busy, 0)
	st := e.stats(t, busy)
	if got, want := st.GetMemory().GetWorkingSetBytes().GetValue(), base+200<<20; got != want {
		t.Errorf("working set after alloc 200Mi = %d, want base %d + 200Mi = %d", got, base, want)
	}
	rate := baseNanoCores(busy) + 500_000_000
	if got := st.GetCpu().GetUsageNanoCores().GetValue(); got != rate {
		t.Errorf("usageNanoCores after burn 500m = %d, want %d", got, rate)
	}
	if got, want := st.GetCpu().GetUsageCoreNanoSeconds().GetValue(), rate*10; got != want {
		t.Errorf("CPU time after 10 s = %d, want %d", got, want)
	}
	if got := e.stats(t, plain).GetMemory().GetWorkingSetBytes().GetValue(); got != baseWorkingSet(plain, 0) {
		t.Errorf("a container without alloc has working set %d, want its base %d", got, baseWorkingSet(plain, 0))
	}

	e.clock.Step(10 * time.Second) // sleep 20 ends: exit 0
	if s := e.waitExited(t, busy); s.GetExitCode() != 0 || s.GetReason() != "Completed" {
		t.Fatalf("busy exited %d %q, want 0 Completed", s.GetExitCode(), s.GetReason())
	}
	e.clock.Step(time.Minute)
	st = e.stats(t, busy)
	if got := st.GetMemory().GetWorkingSetBytes().GetValue(); got != 0 {
		t.Errorf("working set of an exited container = %d, want 0", got)
	}
	if got, want := st.GetCpu().GetUsageCoreNanoSeconds().GetValue(), rate*20; got != want {
		t.Errorf("CPU time of the exited container = %d, want %d (it stops at exit)", got, want)
	}
}

// A burn over the CPU limit is throttled to the CFS quota.
func TestBurnIsThrottledByCPULimit(t *testing.T) {
	e, id := runLimited(t, "burn 2; sleep infinity", &runtimeapi.LinuxContainerResources{CpuQuota: 25_000, CpuPeriod: 100_000})
	if got := e.stats(t, id).GetCpu().GetUsageNanoCores().GetValue(); got != 250_000_000 {
		t.Errorf("usageNanoCores with burn 2 and a 250m limit = %d, want 250000000", got)
	}
}

// CPU time keeps growing for as long as the container runs: rate × elapsed overflows 64 bits
// after 37 s at 500m (5e8 nanocores × 3.7e10 ns), and metrics-server drops a container whose
// cumulative CPU time goes down ("unexpected decrease in cumulative CPU usage value").
func TestCPUTimeGrowsForHours(t *testing.T) {
	e, id := runLimited(t, "burn 800m; sleep infinity", &runtimeapi.LinuxContainerResources{CpuQuota: 50_000, CpuPeriod: 100_000})
	var last uint64
	for _, step := range []time.Duration{30 * time.Second, 10 * time.Second, time.Hour, 24 * time.Hour} {
		e.clock.Step(step)
		got := e.stats(t, id).GetCpu().GetUsageCoreNanoSeconds().GetValue()
		if got < last {
			t.Fatalf("CPU time went down from %d to %d after another %s", last, got, step)
		}
		last = got
	}
	if want := uint64(500_000_000) * uint64((25*time.Hour + 40*time.Second).Seconds()); last != want {
		t.Errorf("CPU time after 25 h 40 s at 500m = %d, want %d", last, want)
	}
}

// Over its memory limit a container ends as containerd reports an OOM kill: exit code 137,
// reason OOMKilled; under it, it keeps running.
func TestAllocOverMemoryLimitIsOOMKilled(t *testing.T) {
	for _, tc := range []struct {
		name     string
		alloc    string
		oomKills bool
	}{
		{"over the limit", "100Mi", true},
		{"under the limit", "16Mi", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, id := runLimited(t, "alloc "+tc.alloc+"; echo still here; sleep infinity", &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 64 << 20})
			s := e.containerStatus(t, id)
			if !tc.oomKills {
				if s.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Fatalf("alloc %s under a 64Mi limit: %s %q, want RUNNING", tc.alloc, s.GetState(), s.GetReason())
				}
				return
			}
			if s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || s.GetExitCode() != 137 || s.GetReason() != "OOMKilled" {
				t.Fatalf("alloc %s over a 64Mi limit: %s exit %d %q, want EXITED 137 OOMKilled", tc.alloc, s.GetState(), s.GetExitCode(), s.GetReason())
			}
		})
	}
}

func TestParseUsage(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want step
	}{
		{[]string{"alloc", "200Mi"}, step{kind: stepAlloc, n: 200 << 20}},
		{[]string{"alloc", "1G"}, step{kind: stepAlloc, n: 1_000_000_000}},
		{[]string{"burn", "500m"}, step{kind: stepBurn, n: 500_000_000}},
		{[]string{"burn", "2"}, step{kind: stepBurn, n: 2_000_000_000}},
		{[]string{"alloc"}, step{kind: stepFail, code: 1, text: "alloc: usage: alloc QUANTITY, e.g. alloc 200Mi"}},
		{[]string{"burn", "lots"}, step{kind: stepFail, code: 1, text: "burn: invalid quantity 'lots': use a Kubernetes quantity, e.g. burn 500m"}},
		{[]string{"alloc", "-1Mi"}, step{kind: stepFail, code: 1, text: "alloc: invalid quantity '-1Mi': use a Kubernetes quantity, e.g. alloc 200Mi"}},
	} {
		if got := parseCommand(tc.argv, unknownRunsForever); got.String() != tc.want.String() {
			t.Errorf("parseCommand(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}

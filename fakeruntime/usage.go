package fakeruntime

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Resource usage on paper. Nothing runs, so nothing uses memory or CPU; instead a container's
// program says what it uses, and ContainerStats reports it:
//
//	alloc 200Mi    the working set grows by 200Mi until the container exits
//	burn 500m      the container uses 500m more CPU until it exits (capped by its CPU limit)
//
// On top comes a small base that every running container has (stats.go). If the working set
// goes over the memory limit from CreateContainer (LinuxContainerResources.MemoryLimitInBytes),
// the container is ended as the kernel's OOM killer and containerd would: exit code 137, reason
// OOMKilled.

// reasonOOMKilled is containerd's reason for a container the OOM killer ended.
const reasonOOMKilled = "OOMKilled"

// usage is what a container's main program has asked for with alloc and burn.
type usage struct {
	allocated uint64    // bytes from alloc steps; freed when the container exits
	burning   uint64    // nanocores from burn steps
	cpuNanos  uint64    // core-nanoseconds used up to cpuMark
	cpuMark   time.Time // when cpuNanos was brought up to date: start, each burn, exit
	small     bool      // its program is stress: the base working set is at most smallBase
}

// parseUsage parses `alloc QUANTITY` and `burn QUANTITY`. A mistake reads like a command's
// usage message and sets $? to 1.
func parseUsage(name string, args []string) step {
	example := map[string]string{"alloc": "alloc 200Mi", "burn": "burn 500m"}[name]
	if len(args) != 1 {
		return step{kind: stepFail, code: 1, text: fmt.Sprintf("%s: usage: %s QUANTITY, e.g. %s", name, name, example)}
	}
	q, err := resource.ParseQuantity(args[0])
	if err != nil || q.Sign() < 0 {
		return step{kind: stepFail, code: 1, text: fmt.Sprintf("%s: invalid quantity '%s': use a Kubernetes quantity, e.g. %s", name, args[0], example)}
	}
	if name == "alloc" {
		return step{kind: stepAlloc, n: uint64(q.Value())}
	}
	return step{kind: stepBurn, n: uint64(q.MilliValue()) * 1_000_000}
}

// cpuRate is the container's CPU use in nanocores: nothing unless it runs, else its base plus
// what it burns, capped by its CFS quota as the kernel would throttle it.
func (c *container) cpuRate() uint64 {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return 0
	}
	rate := baseNanoCores(c.id) + c.use.burning
	lin := c.resources.GetLinux()
	if quota, period := lin.GetCpuQuota(), lin.GetCpuPeriod(); quota > 0 && period > 0 {
		rate = min(rate, uint64(quota)*1_000_000_000/uint64(period))
	}
	return rate
}

// cpuNanosAt is the container's cumulative CPU time at now, in core-nanoseconds: what it had
// at cpuMark, plus its rate (nanocores) × the time since (ns) / 1 s. The product is taken in 128
// bits: in 64 it overflows after 37 s at 500m, and the CPU time would go down.
func (c *container) cpuNanosAt(now time.Time) uint64 {
	if c.use.cpuMark.IsZero() || now.Before(c.use.cpuMark) {
		return c.use.cpuNanos
	}
	hi, lo := bits.Mul64(c.cpuRate(), uint64(now.Sub(c.use.cpuMark)))
	if hi >= uint64(time.Second) {
		return math.MaxUint64 // centuries of CPU time: the quotient would not fit
	}
	since, _ := bits.Div64(hi, lo, uint64(time.Second))
	return c.use.cpuNanos + since
}

// markCPU brings the cumulative CPU time up to now; call it before the rate changes.
func (c *container) markCPU(now time.Time) {
	c.use.cpuNanos, c.use.cpuMark = c.cpuNanosAt(now), now
}

// workingSet is the container's memory in use: its base and what it allocated, while it runs.
func (c *container) workingSet() uint64 {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return 0
	}
	base := baseWorkingSet(c.id, c.memoryLimit())
	if c.use.small {
		base = min(base, smallBase)
	}
	return base + c.use.allocated
}

// smallBase is the base working set of a container whose program is a small tool like stress:
// the memory it asks for is nearly all it uses (the docs' memory-demo: 150M stays under 200Mi).
const smallBase = 2 << 20

// memoryLimit is MemoryLimitInBytes from CreateContainer or UpdateContainerResources; 0: none.
func (c *container) memoryLimit() uint64 {
	return uint64(max(c.resources.GetLinux().GetMemoryLimitInBytes(), 0))
}

// useLocked applies an alloc or burn step of c's main program. It returns false if the
// container was OOM-killed: its working set went over its memory limit.
func (r *Runtime) useLocked(c *container, st step) bool {
	now := r.clock.Now()
	switch st.kind {
	case stepBurn:
		c.markCPU(now)
		c.use.burning += st.n
	case stepAlloc:
		c.use.small = c.use.small || st.hold
		c.markCPU(now)
		c.use.burning += st.burnAlso
		c.use.allocated += st.n
		if limit := c.memoryLimit(); limit > 0 && c.workingSet() > limit {
			r.logger.V(2).Info("Container over its memory limit, OOM-killed", "containerID", c.id, "workingSetBytes", c.workingSet(), "limitBytes", limit)
			r.exitLocked(c, exitCodeSIGKILL, reasonOOMKilled, "")
			return false
		}
	}
	return true
}

package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"
)

// machineNode reads the machine's figures, as upstream reads its root cgroup through cadvisor:
//
//	memory   /proc/meminfo: usage = MemTotal − MemFree, working set = usage − Inactive(file),
//	         available = MemTotal − working set (upstream's memory.available), RSS = AnonPages
//	CPU      /proc/stat: user+nice+system+irq+softirq+steal ticks (USER_HZ 100) as core-seconds;
//	         the rate since the previous call
//	nodefs   statfs of --root-dir;  imagefs: statfs of ImageFsInfo's mountpoint (else nodefs)
//	rlimit   /proc/sys/kernel/pid_max and sysinfo's process count
//	start    /proc/stat btime (boot time), as upstream
type machineNode struct {
	rootDir string
	prev    *cpuSample // the node's previous CPU sample
}

// userHZ is the kernel's USER_HZ, the unit of /proc/stat: 100 on every Linux architecture we run.
const userHZ = 100

func (n *machineNode) stats(in nodeInput) (statsapi.NodeStats, error) {
	ts := metav1.NewTime(in.Now)
	mem, err := readMeminfo("/proc/meminfo")
	if err != nil {
		return statsapi.NodeStats{}, err
	}
	cpuTicks, bootTime, err := readProcStat("/proc/stat")
	if err != nil {
		return statsapi.NodeStats{}, err
	}
	sample := cpuSample{at: in.Now.UnixNano(), nanos: cpuTicks * uint64(time.Second/userHZ)}
	cpu := &statsapi.CPUStats{Time: ts, UsageCoreNanoSeconds: ptr.To(sample.nanos)}
	if n.prev != nil {
		cpu.UsageNanoCores = sample.nanoCoresSince(*n.prev)
	}
	n.prev = &sample

	total, usage := mem["MemTotal"], sub(mem["MemTotal"], mem["MemFree"])
	workingSet := sub(usage, mem["Inactive(file)"])
	nodeFs, err := statfs(n.rootDir, ts)
	if err != nil {
		return statsapi.NodeStats{}, fmt.Errorf("nodefs (--root-dir %s): %w", n.rootDir, err)
	}
	imageFs := nodeFs
	if mp := in.ImageFs.GetFsId().GetMountpoint(); mp != "" {
		if fs, err := statfs(mp, ts); err == nil {
			imageFs = fs
		}
	}
	imageFs = ptr.To(*imageFs)
	imageFs.UsedBytes = ptr.To(in.ImageFs.GetUsedBytes().GetValue())
	var info unix.Sysinfo_t
	procs := int64(0)
	if err := unix.Sysinfo(&info); err == nil {
		procs = int64(info.Procs)
	}
	return statsapi.NodeStats{
		StartTime: metav1.NewTime(time.Unix(int64(bootTime), 0)),
		CPU:       cpu,
		Memory: &statsapi.MemoryStats{Time: ts, WorkingSetBytes: ptr.To(workingSet), UsageBytes: ptr.To(usage),
			RSSBytes: ptr.To(mem["AnonPages"]), AvailableBytes: ptr.To(sub(total, workingSet))},
		Fs:      nodeFs,
		Runtime: &statsapi.RuntimeStats{ImageFs: imageFs, ContainerFs: imageFs},
		Rlimit:  &statsapi.RlimitStats{Time: ts, MaxPID: ptr.To(readPidMax()), NumOfRunningProcesses: ptr.To(procs)},
	}, nil
}

// readMeminfo returns /proc/meminfo's figures in bytes, by name.
func readMeminfo(path string) (map[string]uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text()) // "MemTotal:   16318480 kB"
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		if len(f) == 3 && f[2] == "kB" {
			v *= 1024
		}
		out[strings.TrimSuffix(f[0], ":")] = v
	}
	if out["MemTotal"] == 0 {
		return nil, fmt.Errorf("no MemTotal in %s", path)
	}
	return out, nil
}

// readProcStat returns the CPU ticks spent not idle (all CPUs) and the boot time (Unix seconds).
func readProcStat(path string) (busyTicks, bootTime uint64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	var sawCPU bool
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 9 && f[0] == "cpu": // cpu user nice system idle iowait irq softirq steal …
			for _, i := range []int{1, 2, 3, 6, 7, 8} {
				v, _ := strconv.ParseUint(f[i], 10, 64)
				busyTicks += v
			}
			sawCPU = true
		case len(f) == 2 && f[0] == "btime":
			bootTime, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	if !sawCPU {
		return 0, 0, fmt.Errorf("no cpu line in %s", path)
	}
	return busyTicks, bootTime, nil
}

// statfs is a filesystem's size and free space.
func statfs(path string, ts metav1.Time) (*statsapi.FsStats, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil, err
	}
	bsize := uint64(st.Bsize) //nolint:gosec // a block size is positive
	return &statsapi.FsStats{Time: ts,
		CapacityBytes: ptr.To(st.Blocks * bsize), AvailableBytes: ptr.To(st.Bavail * bsize),
		UsedBytes: ptr.To((st.Blocks - st.Bfree) * bsize),
		Inodes:    ptr.To(st.Files), InodesFree: ptr.To(st.Ffree), InodesUsed: ptr.To(st.Files - st.Ffree)}, nil
}

// readPidMax is the kernel's pid_max (upstream's Rlimit.MaxPID), or Linux's default if unreadable.
func readPidMax() int64 {
	data, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return defaultMaxPID
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || v <= 0 {
		return defaultMaxPID
	}
	return v
}

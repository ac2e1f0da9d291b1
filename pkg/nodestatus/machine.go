package nodestatus

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Machine is what the node reports about the host it runs on. ReadMachine fills it from /proc,
// /etc and statfs; flags may override the capacity (fake nodes).
type Machine struct {
	Capacity corev1.ResourceList // cpu, memory, ephemeral-storage (pods is added from maxPods)
	Info     corev1.NodeSystemInfo
}

// ReadMachine reads the host's size and identity. rootDir's filesystem is the ephemeral storage.
// Missing sources are left empty rather than failing: a container or VM may lack some of them.
func ReadMachine(rootDir string) Machine {
	m := Machine{Capacity: corev1.ResourceList{
		corev1.ResourceCPU: *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
	}}
	if kb, err := memTotalKB("/proc/meminfo"); err == nil {
		m.Capacity[corev1.ResourceMemory] = *resource.NewQuantity(kb*1024, resource.BinarySI)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(existingParent(rootDir), &st); err == nil {
		m.Capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(st.Blocks)*st.Bsize, resource.BinarySI)
	}
	m.Info = corev1.NodeSystemInfo{
		MachineID:       firstLine("/etc/machine-id", "/var/lib/dbus/machine-id"),
		SystemUUID:      firstLine("/sys/class/dmi/id/product_uuid"),
		BootID:          firstLine("/proc/sys/kernel/random/boot_id"),
		KernelVersion:   firstLine("/proc/sys/kernel/osrelease"),
		OSImage:         osImage("/etc/os-release"),
		OperatingSystem: runtime.GOOS,
		Architecture:    runtime.GOARCH,
	}
	return m
}

func memTotalKB(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			return strconv.ParseInt(fields[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no MemTotal in %s", path)
}

func firstLine(paths ...string) string {
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			if line := strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]); line != "" {
				return line
			}
		}
	}
	return ""
}

func osImage(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "Unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Unknown"
}

// existingParent walks up from dir to a directory that exists (the root dir may not yet).
func existingParent(dir string) string {
	for dir != "/" && dir != "." {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		dir = dir[:max(strings.LastIndexByte(dir, '/'), 1)]
	}
	return "/"
}

// DetectNodeIP picks the node's InternalIP when --node-ip is not given, like upstream: an address
// the hostname resolves to, else the first global unicast address of an interface that is up.
func DetectNodeIP(hostname string) (net.IP, error) {
	if ips, err := net.LookupIP(hostname); err == nil {
		for _, ip := range ips {
			if ip.IsGlobalUnicast() {
				return ip, nil
			}
		}
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			if ipnet, ok := a.(*net.IPNet); ok && ipnet.IP.IsGlobalUnicast() {
				return ipnet.IP, nil
			}
		}
	}
	return nil, fmt.Errorf("no global unicast address found: set --node-ip")
}

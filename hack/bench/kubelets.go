package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// side is one kubelet under test: a label for the table, its node name, and the command that
// runs it as node with its files in dir and its kubelet API on port. Both get the kubelet's default
// client rate limit, kubeAPIQPS 50 and kubeAPIBurst 100 (minikubelet's defaults; flags for kubemark).
type side struct {
	label string
	node  string
	cmd   func(node, dir string, port int) *exec.Cmd
	// cleanup, when set, removes what the stopped kubelet left outside dir.
	cleanup func(p *process)
	// minikubelet: its relists (/metrics) and a killed container's way to the API are measured.
	minikubelet bool
}

// minikubeletSide is minikubelet on its built-in fake runtime, with everything under dir.
func minikubeletSide(bin, bootstrapKubeconfig string) side {
	return side{label: "minikubelet", node: "bench-minikubelet", minikubelet: true, cmd: func(node, dir string, port int) *exec.Cmd {
		return exec.Command(bin,
			"--bootstrap-kubeconfig", bootstrapKubeconfig, "--root-dir", dir, "--hostname-override", node,
			"--node-ip", "127.0.0.1", "--address", "127.0.0.1", "--port", strconv.Itoa(port), clusterDNS[0], clusterDNS[1], clusterDNS[2], clusterDNS[3])
	}}
}

// clusterDNS is what kubeadm and kind (and `make run`) give every kubelet: without it each
// ClusterFirst pod gets upstream's MissingClusterDNS Warning, on the pod and on the Node, which no
// kubeadm-made node records. The hollow node records no Events at all.
var clusterDNS = [4]string{"--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local"}

// hollowSide is kubemark --morph=kubelet: the upstream kubelet (pkg/kubelet) with kubemark's
// fake CRI runtime and image service, fake cAdvisor and a stub container manager. Its root dir
// (static pods, pod logs) is always a new /tmp/hollow-kubelet.* (kubemark's hollow_kubelet.go
// hard-codes /tmp), which it names in its log; cleanup removes it.
func hollowSide(bin, bootstrapKubeconfig string) side {
	return side{label: "hollow node", node: "bench-hollow-node", cmd: func(node, dir string, port int) *exec.Cmd {
		return exec.Command(bin, "--morph=kubelet", "--name="+node,
			"--bootstrap-kubeconfig="+bootstrapKubeconfig,
			"--kubeconfig="+filepath.Join(dir, "kubeconfig"), "--cert-dir="+filepath.Join(dir, "pki"),
			"--use-host-image-service=false",
			"--kube-api-qps=50", "--kube-api-burst=100",
			"--kubelet-port="+strconv.Itoa(port), "--kubelet-read-only-port=0")
	}, cleanup: removeHollowRoot}
}

// hollowRootRE finds the root dir in the hollow node's log line "Using <dir> as root dir for
// hollow-kubelet".
var hollowRootRE = regexp.MustCompile(`Using (/tmp/hollow-kubelet\.[^ /"]+) as root dir`)

// removeHollowRoot removes the stopped hollow node's /tmp/hollow-kubelet.* root dir.
func removeHollowRoot(p *process) {
	data, _ := os.ReadFile(p.log)
	if m := hollowRootRE.FindSubmatch(data); m != nil {
		if err := os.RemoveAll(string(m[1])); err != nil {
			say("could not remove the hollow node's root dir: %v", err)
		}
	}
}

// process is a kubelet started by the bench. It dies with the bench (Pdeathsig) if the bench
// is killed; stop ends it.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	log     string
}

// start runs cmd with its output in logPath; started is taken just before the exec.
func start(cmd *exec.Cmd, logPath string) (*process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &process{cmd: cmd, done: make(chan struct{}), log: logPath}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, and SIGKILL if the process is still there 20 s later.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail is the end of the process's log, for errors.
func (p *process) logTail() string {
	data, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// memory is a process's resident set from /proc/<pid>/status, in KiB: anonymous (heap, stacks)
// plus file-backed (the pages of the executable it has touched).
type memory struct {
	RSSKiB  int64 `json:"rssKiB"`
	AnonKiB int64 `json:"anonKiB"`
	FileKiB int64 `json:"fileKiB"`
}

func (m memory) mb() float64 { return float64(m.RSSKiB) / 1024 }

// readMemory reads p's memory; an exited process (a zombie has no VmRSS) is an error, not zero.
func (p *process) readMemory() (memory, error) {
	if p.exited() {
		return memory{}, fmt.Errorf("%s exited:\n%s", filepath.Base(p.cmd.Path), p.logTail())
	}
	return readMemory(p.cmd.Process.Pid)
}

// memoryAfter waits d (the process settles) and then reads p's memory.
func (p *process) memoryAfter(ctx context.Context, d time.Duration) (memory, error) {
	if err := sleep(ctx, d); err != nil {
		return memory{}, err
	}
	return p.readMemory()
}

// cpuSeconds is p's CPU time so far; an exited process is an error.
func (p *process) cpuSeconds() (float64, error) {
	if p.exited() {
		return 0, fmt.Errorf("%s exited:\n%s", filepath.Base(p.cmd.Path), p.logTail())
	}
	return cpuSeconds(p.cmd.Process.Pid)
}

func readMemory(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	if !strings.Contains(string(data), "\nVmRSS:") {
		return memory{}, fmt.Errorf("/proc/%d/status has no VmRSS: the process has exited", pid)
	}
	var m memory
	for _, line := range strings.Split(string(data), "\n") {
		key, value, _ := strings.Cut(line, ":")
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch key {
		case "VmRSS":
			m.RSSKiB = kib
		case "RssAnon":
			m.AnonKiB = kib
		case "RssFile":
			m.FileKiB = kib
		}
	}
	return m, nil
}

// clockTicksPerSecond is USER_HZ, 100 on Linux.
const clockTicksPerSecond = 100

// cpuSeconds is the user plus system CPU time the process has used, from /proc/<pid>/stat.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields are counted after its closing ')'.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

// freePort is a TCP port free on 127.0.0.1 right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

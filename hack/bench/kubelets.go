package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
}

func minikubeletSide(bin, bootstrapKubeconfig string) side {
	return side{label: "minikubelet", node: "bench-minikubelet", cmd: func(node, dir string, port int) *exec.Cmd {
		return exec.Command(bin,
			"--bootstrap-kubeconfig", bootstrapKubeconfig, "--root-dir", dir, "--hostname-override", node,
			"--node-ip", "127.0.0.1", "--address", "127.0.0.1", "--port", strconv.Itoa(port))
	}}
}

// hollowSide is kubemark --morph=kubelet: the upstream kubelet (pkg/kubelet) with kubemark's
// fake CRI runtime and image service, fake cAdvisor and a stub container manager. It writes its
// root and pod-log directories under $TMPDIR, so TMPDIR is pointed into dir.
func hollowSide(bin, bootstrapKubeconfig string) side {
	return side{label: "hollow node", node: "bench-hollow-node", cmd: func(node, dir string, port int) *exec.Cmd {
		cmd := exec.Command(bin, "--morph=kubelet", "--name="+node,
			"--bootstrap-kubeconfig="+bootstrapKubeconfig,
			"--kubeconfig="+filepath.Join(dir, "kubeconfig"), "--cert-dir="+filepath.Join(dir, "pki"),
			"--use-host-image-service=false",
			"--kube-api-qps=50", "--kube-api-burst=100",
			"--kubelet-port="+strconv.Itoa(port), "--kubelet-read-only-port=0")
		cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(dir, "tmp"))
		return cmd
	}}
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

func readMemory(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
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

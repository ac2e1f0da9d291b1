package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	serviceCIDR  = "10.96.0.0/16"
	serviceAPIIP = "10.96.0.1"
	// readyTimeout bounds how long one component may take to become healthy.
	readyTimeout = 90 * time.Second
)

// component order is start order; down stops them in reverse.
var componentOrder = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

// addonOrder are the optional components a verb of their own starts on a running control plane
// (`cluster metrics-server`); down stops them first. A cluster without them is healthy.
var addonOrder = []string{"metrics-server"}

// state is what `up` records in <state-dir>/state.json and `down`/`status` read back.
type state struct {
	BinDir string `json:"binDir"`
	// BinDirs holds the directory of a component not built into BinDir (metrics-server).
	BinDirs map[string]string `json:"binDirs,omitempty"`
	Ports   map[string]int    `json:"ports"`
	PIDs    map[string]int    `json:"pids"`
	Started time.Time         `json:"started"`
	// Commands is how each component was started, so `start-component` can start it again
	// exactly so (same flags, ports and certificates).
	Commands map[string]command `json:"commands"`
}

// command is one component's flags and the URL that answers 200 once it is healthy.
type command struct {
	Args   []string `json:"args"`
	Health string   `json:"health"`
}

// binDirOf is the directory of the named component's binary.
func (s *state) binDirOf(name string) string {
	if dir, ok := s.BinDirs[name]; ok {
		return dir
	}
	return s.BinDir
}

type upOptions struct {
	binDir                 string
	nodeMonitorGracePeriod time.Duration
	signingDuration        time.Duration
	// auditLog, when set, makes kube-apiserver write an audit log there: one JSON line per
	// request made by a node (group system:nodes), at level Metadata. make bench counts them.
	auditLog string
}

type cluster struct {
	stateDir   string
	foreground bool // components die with this process (see waitThenDown)
}

func (c *cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.stateDir}, elem...)...)
}

func (c *cluster) readState() (*state, error) {
	data, err := os.ReadFile(c.path("state.json"))
	if err != nil {
		return nil, err
	}
	s := &state{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("parse %s: %w (remove the directory to start over)", c.path("state.json"), err)
	}
	return s, nil
}

func (c *cluster) writeState(s *state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(c.path("state.json"), data, 0o644)
}

// up starts a control plane in the state directory, or reports the healthy one already running
// there: binaries, PKI and ports, kubeconfigs, then each component in start order, waiting until
// it is healthy (and, after kube-apiserver, creating the bootstrap objects).
func (c *cluster) up(ctx context.Context, o upOptions) error {
	if err := c.reuseOrClean(ctx); err == nil {
		return nil // a healthy cluster is already running and was reported
	} else if !errors.Is(err, errNoCluster) {
		return err
	}
	binDir, err := checkBinaries(o.binDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.path("logs"), 0o755); err != nil {
		return err
	}
	p := pki{dir: c.path("pki")}
	if err := p.generate(); err != nil {
		return fmt.Errorf("generate PKI: %w", err)
	}
	ports, err := freePorts("etcd", "etcd-peer", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
	if err != nil {
		return err
	}
	s := &state{BinDir: binDir, Ports: ports, PIDs: map[string]int{}, Started: time.Now(), Commands: map[string]command{}}

	// If anything below fails, stop what was started: never leave half a cluster running.
	ok := false
	defer func() {
		if !ok {
			stopAll(s)
			_ = os.Remove(c.path("state.json"))
		}
	}()

	apiURL := fmt.Sprintf("https://127.0.0.1:%d", ports["kube-apiserver"])
	if err := c.writeKubeconfigs(apiURL, p); err != nil {
		return err
	}
	checker, err := newHealthChecker(p)
	if err != nil {
		return err
	}
	components, err := c.controlPlane(p, ports, o)
	if err != nil {
		return err
	}
	for _, comp := range components {
		if err := c.startHealthy(ctx, s, checker, comp); err != nil {
			return err
		}
		if comp.name == "kube-apiserver" {
			if err := bootstrapObjects(ctx, c, p, apiURL); err != nil {
				return err
			}
		}
	}
	ok = true
	c.report(s)
	return nil
}

// checkBinaries returns binDir as an absolute path once every component and kubectl is in it.
func checkBinaries(binDir string) (string, error) {
	binDir, err := filepath.Abs(binDir)
	if err != nil {
		return "", err
	}
	for _, name := range append(componentOrder, "kubectl") {
		if _, err := os.Stat(filepath.Join(binDir, name)); err != nil {
			return "", fmt.Errorf("%s is missing in %s: run hack/cluster/build.sh", name, binDir)
		}
	}
	return binDir, nil
}

// writeKubeconfigs writes the certificate kubeconfigs of the admin, kube-controller-manager and
// kube-scheduler into the state directory.
func (c *cluster) writeKubeconfigs(apiURL string, p pki) error {
	for _, kc := range []struct{ file, cert string }{
		{"admin.kubeconfig", "admin"},
		{"controller-manager.kubeconfig", "controller-manager"},
		{"scheduler.kubeconfig", "scheduler"},
	} {
		if err := writeCertKubeconfig(c.path(kc.file), apiURL, p, kc.cert); err != nil {
			return err
		}
	}
	return nil
}

// component is one control-plane component to start: its flags and the URL that answers 200
// once it is healthy.
type component struct {
	name   string
	args   []string
	health string
}

// controlPlane is the components of componentOrder with their flags, in start order; with
// o.auditLog, kube-apiserver also writes an audit log.
func (c *cluster) controlPlane(p pki, ports map[string]int, o upOptions) ([]component, error) {
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports["etcd"])
	apiServer := apiServerComponent(p, ports["kube-apiserver"], etcdURL)
	if o.auditLog != "" {
		args, err := c.auditArgs(o.auditLog)
		if err != nil {
			return nil, err
		}
		apiServer.args = append(apiServer.args, args...)
	}
	return []component{
		c.etcdComponent(etcdURL, fmt.Sprintf("http://127.0.0.1:%d", ports["etcd-peer"])),
		apiServer,
		c.controllerManagerComponent(p, ports["kube-controller-manager"], o),
		c.schedulerComponent(p, ports["kube-scheduler"]),
	}, nil
}

func (c *cluster) etcdComponent(etcdURL, peerURL string) component {
	return component{"etcd", []string{
		"--name=default",
		"--data-dir=" + c.path("etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// A throwaway development cluster: durability is not worth the fsync latency here.
		"--unsafe-no-fsync=true",
	}, etcdURL + "/health"}
}

func apiServerComponent(p pki, port int, etcdURL string) component {
	return component{"kube-apiserver", []string{
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + etcdURL,
		"--tls-cert-file=" + p.path("apiserver.crt"), "--tls-private-key-file=" + p.path("apiserver.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--requestheader-client-ca-file=" + p.path("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		// The aggregation layer's client certificate: kube-apiserver shows it to an aggregated
		// API server (metrics-server) when it proxies a request there.
		"--proxy-client-cert-file=" + p.path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p.path("front-proxy-client.key"),
		"--kubelet-client-certificate=" + p.path("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p.path("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.path("sa.pub"),
		"--service-account-signing-key-file=" + p.path("sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-bootstrap-token-auth=true",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		// Loopback addresses are not valid Endpoints: do not try to publish ourselves as the
		// kubernetes service (nothing in-cluster can reach 127.0.0.1 of this machine anyway).
		"--endpoint-reconciler-type=none",
	}, fmt.Sprintf("https://127.0.0.1:%d/readyz", port)}
}

func (c *cluster) controllerManagerComponent(p pki, port int, o upOptions) component {
	return component{"kube-controller-manager", []string{
		"--kubeconfig=" + c.path("controller-manager.kubeconfig"),
		"--authentication-kubeconfig=" + c.path("controller-manager.kubeconfig"),
		"--authorization-kubeconfig=" + c.path("controller-manager.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + p.path("controller-manager.crt"), "--tls-private-key-file=" + p.path("controller-manager.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--root-ca-file=" + p.path("ca.crt"),
		"--service-account-private-key-file=" + p.path("sa.key"),
		"--use-service-account-credentials=true",
		// kcm signs kubelet client CSRs with the cluster CA; the CSR approver auto-approves them.
		"--cluster-signing-cert-file=" + p.path("ca.crt"), "--cluster-signing-key-file=" + p.path("ca.key"),
		"--cluster-signing-duration=" + o.signingDuration.String(),
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--node-monitor-grace-period=" + o.nodeMonitorGracePeriod.String(),
		"--node-monitor-period=2s",
		"--leader-elect=false",
	}, fmt.Sprintf("https://127.0.0.1:%d/healthz", port)}
}

func (c *cluster) schedulerComponent(p pki, port int) component {
	return component{"kube-scheduler", []string{
		"--kubeconfig=" + c.path("scheduler.kubeconfig"),
		"--authentication-kubeconfig=" + c.path("scheduler.kubeconfig"),
		"--authorization-kubeconfig=" + c.path("scheduler.kubeconfig"),
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + p.path("scheduler.crt"), "--tls-private-key-file=" + p.path("scheduler.key"),
		"--client-ca-file=" + p.path("ca.crt"),
		"--leader-elect=false",
	}, fmt.Sprintf("https://127.0.0.1:%d/healthz", port)}
}

// startHealthy starts one component, records how in the state file (for start-component), and
// waits until it is healthy.
func (c *cluster) startHealthy(ctx context.Context, s *state, checker *healthChecker, comp component) error {
	exited, err := c.start(s, comp.name, comp.args)
	if err != nil {
		return err
	}
	s.Commands[comp.name] = command{Args: comp.args, Health: comp.health}
	if err := c.writeState(s); err != nil {
		return err
	}
	return checker.waitHealthy(ctx, comp.name, comp.health, exited, c.path("logs", comp.name+".log"))
}

var errNoCluster = errors.New("no cluster")

// reuseOrClean reports a running, healthy cluster (nil), or cleans up what a dead one left behind
// and returns errNoCluster so that `up` starts a new one.
func (c *cluster) reuseOrClean(ctx context.Context) error {
	s, err := c.readState()
	if errors.Is(err, os.ErrNotExist) {
		_ = os.RemoveAll(c.stateDir) // leftovers without a state file are from a failed start
		return errNoCluster
	}
	if err != nil {
		return err
	}
	dead := c.deadComponents(s)
	if len(dead) == 0 {
		checker, err := newHealthChecker(pki{dir: c.path("pki")})
		if err == nil && checker.get(ctx, fmt.Sprintf("https://127.0.0.1:%d/readyz", s.Ports["kube-apiserver"])) == nil {
			if err := ensureBindings(ctx, c); err != nil {
				return err
			}
			fmt.Println("The local control plane is already running.")
			c.report(s)
			return nil
		}
	}
	fmt.Fprintf(os.Stderr, "Found a broken cluster in %s (not running: %s); cleaning it up and starting a new one.\n",
		c.stateDir, strings.Join(dead, ", "))
	for _, name := range dead {
		printLogTail(os.Stderr, name, c.path("logs", name+".log"))
	}
	stopAll(s)
	if err := os.RemoveAll(c.stateDir); err != nil {
		return err
	}
	return errNoCluster
}

func (c *cluster) deadComponents(s *state) []string {
	var dead []string
	for _, name := range componentOrder {
		if !isOurProcess(s.PIDs[name], s.BinDir) {
			dead = append(dead, name)
		}
	}
	return dead
}

// start launches one component in its own session (so it outlives `cluster up` and a terminal's
// Ctrl-C), logging to logs/<name>.log. The returned channel is closed when the process exits
// while this program is still watching it.
func (c *cluster) start(s *state, name string, args []string) (<-chan struct{}, error) {
	logFile, err := os.OpenFile(c.path("logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(s.binDirOf(name), name), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if c.foreground {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s.PIDs[name] = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	fmt.Printf("started %-24s pid %-7d log %s\n", name, cmd.Process.Pid, c.path("logs", name+".log"))
	return exited, nil
}

// waitThenDown is the rest of `up --foreground`: wait for SIGTERM/SIGINT, then stop and clean.
func (c *cluster) waitThenDown() error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	fmt.Println("cluster is ready")
	<-sig
	return c.down()
}

func (c *cluster) down() error {
	s, err := c.readState()
	if errors.Is(err, os.ErrNotExist) {
		fmt.Printf("No cluster recorded in %s; nothing to stop.\n", c.stateDir)
		return nil
	}
	if err != nil {
		return err
	}
	stopAll(s)
	if err := os.RemoveAll(c.stateDir); err != nil {
		return fmt.Errorf("clean %s: %w", c.stateDir, err)
	}
	fmt.Printf("Stopped the local control plane and removed %s.\n", c.stateDir)
	return nil
}

// stopComponent stops one running component by its recorded PID (`cluster stop-component`), as
// a crash or an upgrade would; the rest of the cluster keeps running. A foreground supervisor
// does not mind: it only watches for its own SIGTERM.
func (c *cluster) stopComponent(name string) error {
	s, err := c.readState()
	if err != nil {
		return fmt.Errorf("read the cluster state in %s: %w", c.stateDir, err)
	}
	pid := s.PIDs[name]
	if !isOurProcess(pid, s.binDirOf(name)) {
		return fmt.Errorf("%s is not running (recorded pid %d): nothing to stop", name, pid)
	}
	stopAll(&state{BinDir: s.BinDir, BinDirs: s.BinDirs, PIDs: map[string]int{name: pid}}) // only this one
	fmt.Printf("stopped %-24s pid %d\n", name, pid)
	return nil
}

// startComponent starts a stopped component again with the flags it was first started with,
// records its new PID and waits until it is healthy (`cluster start-component`). It runs in its
// own session and outlives this command; `down` stops it by its recorded PID.
func (c *cluster) startComponent(ctx context.Context, name string) error {
	s, err := c.readState()
	if err != nil {
		return fmt.Errorf("read the cluster state in %s: %w", c.stateDir, err)
	}
	cmd, ok := s.Commands[name]
	if !ok {
		return fmt.Errorf("no recorded command for %q in %s: name one of %s (of a cluster started by this version)",
			name, c.path("state.json"), strings.Join(componentOrder, ", "))
	}
	if isOurProcess(s.PIDs[name], s.binDirOf(name)) {
		return fmt.Errorf("%s is already running (pid %d): stop it first with stop-component", name, s.PIDs[name])
	}
	checker, err := newHealthChecker(pki{dir: c.path("pki")})
	if err != nil {
		return err
	}
	exited, err := c.start(s, name, cmd.Args)
	if err != nil {
		return err
	}
	if err := c.writeState(s); err != nil {
		return err
	}
	return checker.waitHealthy(ctx, name, cmd.Health, exited, c.path("logs", name+".log"))
}

func (c *cluster) status(ctx context.Context) error {
	s, err := c.readState()
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no cluster recorded in %s: start one with `make cluster-up`", c.stateDir)
	}
	if err != nil {
		return err
	}
	dead := c.deadComponents(s)
	for _, name := range componentOrder {
		st := "running"
		if !isOurProcess(s.PIDs[name], s.BinDir) {
			st = "NOT RUNNING"
		}
		fmt.Printf("%-24s pid %-7d port %-6d %s\n", name, s.PIDs[name], s.Ports[name], st)
	}
	for _, name := range addonOrder {
		if _, started := s.PIDs[name]; !started {
			continue
		}
		st := "running"
		if !isOurProcess(s.PIDs[name], s.binDirOf(name)) {
			st = "NOT RUNNING (restart: start-component " + name + "; its log: " + c.path("logs", name+".log") + ")"
		}
		fmt.Printf("%-24s pid %-7d port %-6d %s\n", name, s.PIDs[name], s.Ports[name], st)
	}
	for _, name := range dead {
		printLogTail(os.Stdout, name, c.path("logs", name+".log"))
	}
	if len(dead) > 0 {
		return fmt.Errorf("%d component(s) not running: %s; `make cluster-down && make cluster-up` starts afresh",
			len(dead), strings.Join(dead, ", "))
	}
	checker, err := newHealthChecker(pki{dir: c.path("pki")})
	if err != nil {
		return err
	}
	if err := checker.get(ctx, fmt.Sprintf("https://127.0.0.1:%d/readyz", s.Ports["kube-apiserver"])); err != nil {
		return fmt.Errorf("kube-apiserver is running but not ready: %w", err)
	}
	c.report(s)
	return nil
}

func (c *cluster) report(s *state) {
	abs, _ := filepath.Abs(c.stateDir)
	fmt.Printf(`kube-apiserver:         https://127.0.0.1:%d
admin kubeconfig:       %s
bootstrap kubeconfig:   %s
kubectl:                %s
Try: %s --kubeconfig %s get ns
`, s.Ports["kube-apiserver"], filepath.Join(abs, "admin.kubeconfig"), filepath.Join(abs, "bootstrap.kubeconfig"),
		filepath.Join(s.BinDir, "kubectl"), filepath.Join(s.BinDir, "kubectl"), filepath.Join(abs, "admin.kubeconfig"))
}

// stopAll sends SIGTERM to every recorded component still running (add-ons first, then the
// control plane newest first), waits up to 20 s, then SIGKILLs what is left and waits for it to go.
func stopAll(s *state) {
	names := append([]string{}, addonOrder...)
	for i := len(componentOrder) - 1; i >= 0; i-- {
		names = append(names, componentOrder[i])
	}
	type proc struct {
		pid int
		dir string
	}
	var procs []proc
	for _, name := range names {
		p := proc{s.PIDs[name], s.binDirOf(name)}
		if isOurProcess(p.pid, p.dir) {
			_ = syscall.Kill(p.pid, syscall.SIGTERM)
			procs = append(procs, p)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range procs {
		for isOurProcess(p.pid, p.dir) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if isOurProcess(p.pid, p.dir) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			for isOurProcess(p.pid, p.dir) {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// isOurProcess reports whether pid is alive and runs a binary from binDir, so that a recycled PID
// is never signalled. A zombie (exited, not yet reaped) counts as gone.
func isOurProcess(pid int, binDir string) bool {
	if pid <= 0 {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.HasPrefix(string(cmdline), binDir+"/") {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state letter follows the ")" that closes the command name.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// freePorts asks the kernel for distinct free loopback ports, one per name.
func freePorts(names ...string) (map[string]int, error) {
	ports := map[string]int{}
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for _, name := range names {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port for %s: %w", name, err)
		}
		listeners = append(listeners, l)
		ports[name] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// healthChecker GETs health endpoints over TLS verified against the cluster CA, authenticating
// with the admin client certificate.
type healthChecker struct{ client *http.Client }

func newHealthChecker(p pki) (*healthChecker, error) {
	caPEM, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", p.path("ca.crt"))
	}
	cert, err := tls.LoadX509KeyPair(p.path("admin.crt"), p.path("admin.key"))
	if err != nil {
		return nil, err
	}
	return &healthChecker{client: &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}},
	}}, nil
}

func (h *healthChecker) get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// waitHealthy polls url until it answers 200, the process exits (reported with the tail of its
// log), or readyTimeout passes.
func (h *healthChecker) waitHealthy(ctx context.Context, name, url string, exited <-chan struct{}, logPath string) error {
	deadline := time.After(readyTimeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-exited:
			printLogTail(os.Stderr, name, logPath)
			return fmt.Errorf("%s exited during start-up; its log is above and in %s", name, logPath)
		case <-deadline:
			printLogTail(os.Stderr, name, logPath)
			return fmt.Errorf("%s was not healthy after %s (last error: %v); its log is in %s", name, readyTimeout, last, logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if last = h.get(ctx, url); last == nil {
				return nil
			}
		}
	}
}

func printLogTail(w *os.File, name, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(w, "--- %s: no log (%v)\n", name, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 25 {
		lines = lines[len(lines)-25:]
	}
	fmt.Fprintf(w, "--- last lines of %s:\n%s\n---\n", path, strings.Join(lines, "\n"))
}

// randomString returns n characters of [a-z0-9], the bootstrap token alphabet.
func randomString(n int) (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// auditPolicy logs every request of a node (the group system:nodes holds every kubelet's
// identity) once it is answered, and nothing else. A watch is logged when its response starts
// (ResponseStarted) and again when it ends (ResponseComplete).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:nodes"]
- level: None
`

// auditArgs writes the audit policy into the state dir and returns kube-apiserver's flags for an
// audit log at path, written synchronously (blocking mode) so a line is there once the request
// is answered.
func (c *cluster) auditArgs(path string) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", path, err)
	}
	policy := c.path("audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("write the audit policy: %w", err)
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + abs,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0", "--audit-log-maxbackup=0",
	}, nil
}

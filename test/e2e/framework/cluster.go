// Package framework runs e2e tests against a real control plane: the local one built by
// hack/cluster (started once per `go test` process in TestMain and always stopped), or an existing
// one named by MINIKUBELET_E2E_KUBECONFIG. It also builds minikubelet and runs it as a real process,
// so tests can signal it (SIGSTOP, SIGTERM, SIGKILL) like a user would.
package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options shape the local control plane a test package gets.
type Options struct {
	// NodeMonitorGracePeriod is kcm's --node-monitor-grace-period (default 16 s, short so tests can
	// see a silent node go NotReady).
	NodeMonitorGracePeriod time.Duration
	// ClusterSigningDuration is kcm's --cluster-signing-duration (default one year).
	ClusterSigningDuration time.Duration
	// AuditLog, when set, is where kube-apiserver writes the audit log of every request a node
	// makes (hack/cluster up --audit-log); make bench counts the requests of each kubelet in it.
	AuditLog string
}

// Cluster is a running control plane.
type Cluster struct {
	AdminKubeconfig     string
	BootstrapKubeconfig string
	Kubectl             string // kubectl v1.36.3 built with the control plane
	Client              kubernetes.Interface
	RestConfig          *rest.Config

	supervisor *exec.Cmd // `cluster up --foreground`; nil when reusing an external cluster
	stateDir   string
}

// RepoRoot is the repository's top directory (found from this source file).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// StartCluster starts a local control plane, or connects to the one in MINIKUBELET_E2E_KUBECONFIG
// (with MINIKUBELET_E2E_BOOTSTRAP_KUBECONFIG, default: bootstrap.kubeconfig beside it).
func StartCluster(opts Options) (*Cluster, error) {
	if admin := os.Getenv("MINIKUBELET_E2E_KUBECONFIG"); admin != "" {
		boot := os.Getenv("MINIKUBELET_E2E_BOOTSTRAP_KUBECONFIG")
		if boot == "" {
			boot = filepath.Join(filepath.Dir(admin), "bootstrap.kubeconfig")
		}
		c := &Cluster{AdminKubeconfig: admin, BootstrapKubeconfig: boot}
		return c, c.connect()
	}
	if opts.NodeMonitorGracePeriod == 0 {
		opts.NodeMonitorGracePeriod = 16 * time.Second
	}
	if opts.ClusterSigningDuration == 0 {
		opts.ClusterSigningDuration = 365 * 24 * time.Hour
	}
	stateDir, err := os.MkdirTemp("", "minikubelet-e2e-cluster-")
	if err != nil {
		return nil, err
	}
	args := []string{"--state-dir", stateDir,
		"--node-monitor-grace-period", opts.NodeMonitorGracePeriod.String(),
		"--cluster-signing-duration", opts.ClusterSigningDuration.String()}
	if opts.AuditLog != "" {
		args = append(args, "--audit-log", opts.AuditLog)
	}
	c := &Cluster{
		AdminKubeconfig:     filepath.Join(stateDir, "admin.kubeconfig"),
		BootstrapKubeconfig: filepath.Join(stateDir, "bootstrap.kubeconfig"),
		stateDir:            stateDir,
	}
	kubectl := func(line string) {
		if path, ok := strings.CutPrefix(line, "kubectl:"); ok {
			c.Kubectl = strings.TrimSpace(path)
		}
	}
	// The first run compiles the control plane (~10 min on 2 cores); later runs take seconds.
	c.supervisor, err = startSupervisor("cluster", 30*time.Minute, kubectl, "up", args...)
	if err != nil {
		c.Stop()
		return nil, err
	}
	return c, c.connect()
}

func (c *Cluster) connect() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		return fmt.Errorf("load admin kubeconfig: %w", err)
	}
	c.RestConfig = cfg
	if c.Kubectl == "" {
		c.Kubectl = "kubectl"
		if dir := os.Getenv("MINIKUBELET_E2E_KUBECTL"); dir != "" {
			c.Kubectl = dir
		}
	}
	cfg.Timeout = 30 * time.Second
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if _, err := c.Client.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("the API server in %s does not answer: %v", c.AdminKubeconfig, err)
	}
	return nil
}

// Stop stops the local control plane (by the supervisor's PID; it stops the components by theirs)
// and waits for it. A reused external cluster is left alone.
func (c *Cluster) Stop() {
	if c.supervisor == nil || c.supervisor.Process == nil {
		return
	}
	stopSupervisor(c.supervisor)
	// A clean stop removed the state. If it is still there, the supervisor was killed: its own
	// children died with it, but not a component restarted by StartComponent; stop every
	// recorded PID.
	if _, err := os.Stat(filepath.Join(c.stateDir, "state.json")); err == nil {
		_ = upSh("down", "--state-dir", c.stateDir).Run()
	}
	_ = os.RemoveAll(c.stateDir)
}

// Main is the body of a TestMain: start the cluster, run the tests, always stop the cluster.
// It returns the exit code for os.Exit.
func Main(run func() int, opts Options, cluster **Cluster) int {
	c, err := StartCluster(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot start the control plane:", err)
		return 1
	}
	defer c.Stop()
	*cluster = c
	return run()
}

// MainWithMinikubelet is the whole TestMain of most e2e packages: build minikubelet (with -race)
// into a temporary directory, start the cluster, run the tests, stop the cluster, remove the
// binary. It returns the exit code for os.Exit.
func MainWithMinikubelet(run func() int, opts Options, cluster **Cluster, minikubelet *string) int {
	binDir, err := os.MkdirTemp("", "minikubelet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	if *minikubelet, err = BuildMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return Main(run, opts, cluster)
}

// KubectlOutput runs the cluster's kubectl as the admin and returns its combined output.
func (c *Cluster) KubectlOutput(args ...string) (string, error) {
	cmd := exec.Command(c.Kubectl, append([]string{"--kubeconfig", c.AdminKubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

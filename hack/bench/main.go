// Command bench (make bench) measures minikubelet beside kubemark's hollow node — the real
// kubelet v1.36.3 with a fake CRI runtime and a fake cAdvisor — on one local control plane:
// start→Ready, RSS, idle CPU, API requests, and how fast 100 pods bound at once become Ready;
// then RSS per node of `minikubelet --nodes N`. It prints a table with the ratio ours/theirs and
// writes every raw number as JSON to _output/bench/. A benchmark reports; it does not pass or fail.
//
// Everything runs in a network namespace of its own (`unshare --net`, needs root): the hollow
// kubelet binds 0.0.0.0 and cannot be told otherwise, and nothing here may listen on the host.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// config is what the flags set.
type config struct {
	idle     time.Duration // the idle window for CPU and API requests
	pods     int           // pods bound to the node at once
	creators int           // parallel creators
	nodes    []int         // --nodes N runs of minikubelet
	manyIdle time.Duration // how long each --nodes N run idles after all are Ready
	out      string        // where the JSON goes
	kubemark bool          // measure the hollow node too
	floor    bool          // measure the RSS floor programs (hack/bench/floor)
	evented  bool          // measure minikubelet with the EventedPLEG gate too
	beside   int           // hollow nodes run beside each --nodes N run, over the same window
}

func main() {
	var cfg config
	var nodes string
	flag.DurationVar(&cfg.idle, "idle", time.Minute, "idle window over which CPU seconds and API requests per minute are measured")
	flag.IntVar(&cfg.pods, "pods", 100, "pods bound to the node at once (spec.nodeName)")
	flag.IntVar(&cfg.creators, "creators", 10, "parallel pod creators")
	flag.StringVar(&nodes, "nodes-list", "100,1000", "run `minikubelet --nodes N` for each N and report time to all Ready, RSS per node, idle CPU, API requests and NotReady nodes (empty or 0: skip)")
	flag.DurationVar(&cfg.manyIdle, "nodes-idle", 2*time.Minute, "how long each --nodes N run idles after all its nodes are Ready (CPU, API requests per node, NotReady count)")
	flag.StringVar(&cfg.out, "out", "_output/bench", "directory for the JSON results (a relative path is relative to the repository)")
	flag.BoolVar(&cfg.kubemark, "kubemark", true, "also measure kubemark's hollow node (false: minikubelet only)")
	flag.BoolVar(&cfg.evented, "evented", true, "also measure minikubelet with --feature-gates EventedPLEG=true (relists per idle minute, killed container → API, pod startup)")
	flag.IntVar(&cfg.beside, "hollow-beside", 3, "hollow nodes (one process each) started with each --nodes N run and counted over the same idle window, for API requests per node per minute (0: none; needs --kubemark)")
	flag.BoolVar(&cfg.floor, "floor", true, "also measure what minikubelet's RSS is made of: a client-go-only program, and one with k8s.io/apiserver's authn/authz linked in")
	flag.Parse()
	for _, f := range strings.Split(nodes, ",") {
		if f = strings.TrimSpace(f); f == "" || f == "0" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: --nodes-list %q: want comma-separated positive numbers like 50,100\n", nodes)
			os.Exit(2)
		}
		cfg.nodes = append(cfg.nodes, n)
	}
	if cfg.pods < 1 || cfg.creators < 1 || cfg.idle < 10*time.Second || cfg.beside < 0 {
		fmt.Fprintln(os.Stderr, "bench: --pods and --creators must be positive, --idle at least 10s and --hollow-beside not negative")
		os.Exit(2)
	}
	// The outer process re-runs itself in a private network namespace and waits.
	if done, code := framework.InPrivateNetwork("10.213.0.1"); done {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// report is everything one `make bench` measured; it is written as JSON.
type report struct {
	Date        time.Time      `json:"date"`
	Machine     string         `json:"machine"`
	Config      map[string]any `json:"config"`
	Minikubelet *sideResult    `json:"minikubelet"`
	Evented     *sideResult    `json:"evented,omitempty"` // minikubelet with the EventedPLEG gate
	HollowNode  *sideResult    `json:"hollowNode,omitempty"`
	ManyNodes   []manyResult   `json:"manyNodes,omitempty"`
	RSSFloor    []floorResult  `json:"rssFloor,omitempty"`
}

// run builds both kubelets, starts the cluster, measures each side in turn and writes the report.
func run(ctx context.Context, cfg config) error {
	root := framework.RepoRoot()
	work, err := os.MkdirTemp("", "minikubelet-bench-")
	if err != nil {
		return err
	}
	if os.Getenv("BENCH_KEEP") == "" {
		defer func() { _ = os.RemoveAll(work) }()
	} else {
		say("keeping %s (BENCH_KEEP is set)", work)
	}
	minikubelet, kubemark, err := buildKubelets(ctx, root, work, cfg.kubemark)
	if err != nil {
		return err
	}

	auditLog := filepath.Join(work, "audit.log")
	say("starting the local control plane, with an audit log of every node's requests")
	cluster, err := framework.StartCluster(framework.Options{NodeMonitorGracePeriod: 40 * time.Second, AuditLog: auditLog})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	// The creators must not wait on client-go's default rate limit (5 QPS): 100 pods "at once".
	admin := rest.CopyConfig(cluster.RestConfig)
	admin.QPS, admin.Burst = -1, 0
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, cluster: cluster, client: client, audit: &auditLogReader{path: auditLog}, work: work}
	if kubemark != "" {
		hollow := hollowSide(kubemark, cluster.BootstrapKubeconfig)
		b.hollow = &hollow
	}

	// The first CSR a fresh kube-controller-manager signs waits for its controllers to start
	// (~5 s); a throwaway node takes that wait so that neither side measured pays it.
	say("warming up: one node joins and leaves")
	if err := b.warmUp(ctx, minikubeletSide(minikubelet, cluster.BootstrapKubeconfig)); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	rep, err := b.measureAll(ctx, root, minikubelet, kubemark)
	if err != nil {
		return err
	}
	printTable(os.Stdout, rep)
	out := cfg.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	return writeJSON(out, rep)
}

// buildKubelets builds minikubelet into work and, with withKubemark, kubemark if missing
// (hack/cluster/build.sh kubemark); it returns both binaries ("" for kubemark without it).
func buildKubelets(ctx context.Context, root, work string, withKubemark bool) (minikubelet, kubemark string, err error) {
	say("building minikubelet (no -race) and, if missing, kubemark (hack/cluster/build.sh kubemark)")
	minikubelet = filepath.Join(work, "minikubelet")
	if err := staticBuild(ctx, root, minikubelet, "./cmd/minikubelet"); err != nil {
		return "", "", err
	}
	if !withKubemark {
		return minikubelet, "", nil
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "cluster", "build.sh"), "kubemark")
	cmd.Stderr = os.Stderr // its progress, and why it failed
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("hack/cluster/build.sh kubemark: %w", err)
	}
	return minikubelet, filepath.Join(strings.TrimSpace(lastLine(string(out))), "kubemark"), nil
}

// measureAll measures each side in turn — minikubelet, with EventedPLEG, the hollow node — then
// the RSS floor and each --nodes N run, as cfg asks.
func (b *bench) measureAll(ctx context.Context, root, minikubelet, kubemark string) (*report, error) {
	cfg, kubeconfig := b.cfg, b.cluster.BootstrapKubeconfig
	rep := &report{Date: time.Now().UTC(), Machine: machine(), Config: map[string]any{
		"idle": cfg.idle.String(), "pods": cfg.pods, "creators": cfg.creators, "kubeAPIQPS": 50, "kubeAPIBurst": 100,
	}}
	var err error
	if rep.Minikubelet, err = b.measure(ctx, minikubeletSide(minikubelet, kubeconfig)); err != nil {
		return nil, fmt.Errorf("minikubelet: %w", err)
	}
	if cfg.evented {
		if rep.Evented, err = b.measure(ctx, eventedSide(minikubelet, kubeconfig)); err != nil {
			return nil, fmt.Errorf("minikubelet EventedPLEG: %w", err)
		}
	}
	if cfg.kubemark {
		if rep.HollowNode, err = b.measure(ctx, hollowSide(kubemark, kubeconfig)); err != nil {
			return nil, fmt.Errorf("hollow node: %w", err)
		}
	}
	if cfg.floor {
		if rep.RSSFloor, err = b.rssFloor(ctx, root); err != nil {
			return nil, fmt.Errorf("RSS floor: %w", err)
		}
	}
	for _, n := range cfg.nodes {
		r, err := b.manyNodes(ctx, minikubelet, n)
		if err != nil {
			return nil, fmt.Errorf("minikubelet --nodes %d: %w", n, err)
		}
		rep.ManyNodes = append(rep.ManyNodes, r)
	}
	return rep, nil
}

// writeJSON writes bench-<time>.json and latest.json, each atomically.
func writeJSON(dir string, rep *report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	for _, name := range []string{"bench-" + rep.Date.Format("20060102-150405") + ".json", "latest.json"} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	fmt.Printf("\nRaw numbers: %s\n", filepath.Join(dir, "latest.json"))
	return nil
}

func machine() string {
	out, err := exec.Command("nproc").Output()
	cores := strings.TrimSpace(string(out))
	if err != nil {
		cores = "?"
	}
	return cores + " cores, " + strings.TrimSpace(firstLine("/proc/meminfo"))
}

func firstLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.Join(strings.Fields(line), " ")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

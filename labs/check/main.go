// Command check is the course labs' checker: `make lab-check LAB=01` runs it. It reads the state
// of the running cluster and node of `make run` — the API server, the node's files under its root
// directory, its fake runtime, its kubelet API — and prints one line per check of the lab:
//
//	[OK]      node vm is Ready (KubeletReady: kubelet is posting ready status)
//	[MISSING] pod default/lab05-crash: not found → kubectl run lab05-crash --image=busybox:1.36 -- sh -c "exit 1"
//
// It exits 1 if anything is missing. Every check reads real state, so each one can fail; none
// changes anything, except that lab 07 and 08 exec into a pod and lab 08 port-forwards to it.
// Lab 00 reads no cluster: only pkg/kubelet/lab00_test.go and the _output/labs/lab00.json its
// TestLab00 writes, under --repo-dir (default: the current directory, as make lab-check runs it).
//
// Where to look, with the defaults of hack/run.sh (environment first, then flags):
//
//	CLUSTER=local   --kubeconfig  $CLUSTER_DIR/admin.kubeconfig   (CLUSTER_DIR=_output/cluster)
//	                --root-dir    $ROOT_DIR                       (_output/run)
//	CLUSTER=kind    --kubeconfig  $KIND_DIR/admin.kubeconfig      (KIND_DIR=_output/kind)
//	                --root-dir    $ROOT_DIR                       (_output/kind/run)
//	                --node        $NODE_NAME                      (the hostname, lowercased)
//
// test/labs runs it against a cluster of its own with these flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run parses args (with defaults from getenv), runs the lab's checks and prints them on stdout.
// It returns 0 when every check passed, 1 when one is missing, 2 on a usage error.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lab-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := defaultPaths(getenv)
	lab := fs.String("lab", "", "the lab to check: 00 … 12 (or its directory name, e.g. 04-pleg)")
	var cfg config
	fs.StringVar(&cfg.kubeconfig, "kubeconfig", def.kubeconfig, "an admin kubeconfig of the cluster")
	fs.StringVar(&cfg.bootstrapKubeconfig, "bootstrap-kubeconfig", "", "the node's bootstrap kubeconfig (default: bootstrap.kubeconfig beside --kubeconfig)")
	fs.StringVar(&cfg.rootDir, "root-dir", def.rootDir, "the node's --root-dir")
	fs.StringVar(&cfg.nodeName, "node", def.nodeName, "the node's name")
	fs.StringVar(&cfg.namespace, "namespace", "default", "the namespace of the labs' pods")
	fs.StringVar(&cfg.repoDir, "repo-dir", ".", "the repository's top directory (lab 00 reads pkg/kubelet/lab00_test.go and _output/labs/lab00.json there)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: make lab-check LAB=NN   (or: go run ./labs/check --lab NN [flags])\n\nLabs:\n")
		for _, l := range allLabs() {
			fmt.Fprintf(stderr, "  %s\n", l.dir)
		}
		fmt.Fprintln(stderr, "\nFlags (defaults follow hack/run.sh: CLUSTER, CLUSTER_DIR, KIND_DIR, ROOT_DIR, NODE_NAME):")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *lab == "" && fs.NArg() == 1 {
		*lab = fs.Arg(0)
	}
	l, ok := findLab(*lab)
	if !ok {
		if *lab == "" {
			fmt.Fprintln(stderr, "lab-check: which lab? e.g. make lab-check LAB=01")
		} else {
			fmt.Fprintf(stderr, "lab-check: there is no lab %q\n", *lab)
		}
		fs.Usage()
		return 2
	}
	if cfg.bootstrapKubeconfig == "" {
		cfg.bootstrapKubeconfig = filepath.Join(filepath.Dir(cfg.kubeconfig), "bootstrap.kubeconfig")
	}
	if l.dir == "00-one-pods-life" {
		fmt.Fprintf(stdout, "Lab %s: no cluster needed; files in %s\n", l.dir, cfg.repoDir)
	} else {
		fmt.Fprintf(stdout, "Lab %s: node %q, cluster %s, node files in %s\n", l.dir, cfg.nodeName, cfg.kubeconfig, cfg.rootDir)
	}
	results := runChecks(ctx, newEnv(cfg), l.checks)
	missing := 0
	for _, r := range results {
		fmt.Fprintln(stdout, r.String())
		if !r.ok {
			missing++
		}
	}
	if missing > 0 {
		fmt.Fprintf(stdout, "Lab %s: %d of %d checks are missing. Fix the first one, then run the check again.\n", l.dir, missing, len(results))
		return 1
	}
	fmt.Fprintf(stdout, "Lab %s: all %d checks pass.\n", l.dir, len(results))
	return 0
}

// paths are where `make run` keeps things, per hack/run.sh.
type paths struct {
	kubeconfig, rootDir, nodeName string
}

// defaultPaths mirrors hack/run.sh: the same environment variables with the same defaults.
func defaultPaths(getenv func(string) string) paths {
	or := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	var p paths
	if or("CLUSTER", "local") == "kind" {
		kindDir := or("KIND_DIR", "_output/kind")
		p.kubeconfig = filepath.Join(kindDir, "admin.kubeconfig")
		p.rootDir = or("ROOT_DIR", filepath.Join(kindDir, "run"))
	} else {
		p.kubeconfig = filepath.Join(or("CLUSTER_DIR", "_output/cluster"), "admin.kubeconfig")
		p.rootDir = or("ROOT_DIR", "_output/run")
	}
	p.nodeName = strings.ToLower(getenv("NODE_NAME"))
	if p.nodeName == "" {
		h, _ := os.Hostname()
		p.nodeName = strings.ToLower(h)
	}
	return p
}

// findLab accepts "4", "04", "04-pleg" or "labs/04-pleg/".
func findLab(name string) (lab, bool) {
	name = strings.TrimSuffix(filepath.Base(strings.TrimSuffix(name, "/")), "/")
	for _, l := range allLabs() {
		num, _, _ := strings.Cut(l.dir, "-")
		if name == l.dir || name == num || "0"+name == num {
			return l, true
		}
	}
	return lab{}, false
}

// checkTimeout bounds one check; the longest (lab 03 watching a renewal) waits up to 20 s.
const checkTimeout = 45 * time.Second

// runChecks runs the checks in order. Once a gate fails (the API server does not answer, the
// node is not Ready), the rest are reported as not checked rather than failing each with the
// same error; so is a check whose needs did not pass. "first fix" names the check that failed.
func runChecks(ctx context.Context, e *env, checks []check) []result {
	var results []result
	failed := map[string]string{} // check name → the failed check at the root of it
	gate := ""
	for _, c := range checks {
		root := gate
		for _, n := range c.needs {
			if root == "" && failed[n] != "" {
				root = failed[n]
			}
		}
		if root != "" {
			results = append(results, missing(c.name+": not checked", "first fix: "+root))
			failed[c.name] = root
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		r := c.run(cctx, e)
		cancel()
		results = append(results, r)
		if !r.ok {
			failed[c.name] = c.name
			if c.gate {
				gate = c.name
			}
		}
	}
	return results
}

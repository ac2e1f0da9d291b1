// Command cluster runs a real local Kubernetes control plane — etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, built from the Go module proxy by build.sh — on
// 127.0.0.1 with free ports, for `make run` on a machine with no cluster and for the e2e tests.
//
//	cluster up     [--state-dir DIR] [--bin-dir DIR] [--node-monitor-grace-period D] [--cluster-signing-duration D] [--foreground]
//	cluster down   [--state-dir DIR]
//	cluster status [--state-dir DIR]
//	cluster stop-component  NAME [--state-dir DIR]   stop one component (e.g. kube-apiserver) by its PID
//	cluster start-component NAME [--state-dir DIR]   start it again with the same flags; wait until healthy
//	cluster metrics-server --metrics-server-bin PATH [--state-dir DIR] [--metric-resolution D] [--foreground]
//	                                                 metrics-server on the running control plane (metricsserver.go)
//
// With --foreground, `up` prints "cluster is ready" and stays, and the components die with it
// (PR_SET_PDEATHSIG): a test that is killed never leaves a control plane behind.
// `up` is idempotent: with a healthy cluster recorded in the state dir it only reports it. Every
// process is recorded by PID in <state-dir>/state.json; `down` stops exactly those processes.
// What it sets up is what kubeadm sets up for a kubelet to join: a bootstrap token, the RBAC that
// lets the token create CSRs and that lets kube-controller-manager auto-approve them, and a
// bootstrap.kubeconfig (CA embedded, token user) for the kubelet.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: cluster up|down|status|stop-component NAME|start-component NAME|metrics-server [flags]")
	}
	verb, args := args[0], args[1:]
	var component string // the NAME of stop-component and start-component
	if verb == "stop-component" || verb == "start-component" {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return fmt.Errorf("usage: cluster %s NAME [--state-dir DIR], NAME one of %s", verb, strings.Join(append(componentOrder, addonOrder...), ", "))
		}
		component, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("cluster "+verb, flag.ContinueOnError)
	stateDir := fs.String("state-dir", "_output/cluster", "directory for the PKI, kubeconfigs, logs, etcd data and state.json")
	binDir := fs.String("bin-dir", "", "directory holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler (see build.sh)")
	grace := fs.Duration("node-monitor-grace-period", 40*time.Second, "kube-controller-manager --node-monitor-grace-period: how long a silent node stays Ready")
	signing := fs.Duration("cluster-signing-duration", 365*24*time.Hour, "kube-controller-manager --cluster-signing-duration: the longest certificate it signs for a CSR")
	auditLog := fs.String("audit-log", "", "write kube-apiserver's audit log of every request made by a node (group system:nodes) to this file, one JSON line per request (used by make bench)")
	foreground := fs.Bool("foreground", false, "stay in the foreground after `up` (or `metrics-server`); stop the cluster (or metrics-server) on SIGTERM/SIGINT or when this process dies (used by the e2e tests)")
	msBin := fs.String("metrics-server-bin", "", "metrics-server: the metrics-server binary (hack/cluster/metrics-server.sh builds it)")
	resolution := fs.Duration("metric-resolution", 15*time.Second, "metrics-server: --metric-resolution, how often it scrapes each node (at least 10s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := &cluster{stateDir: *stateDir, foreground: *foreground}
	switch verb {
	case "up":
		if *binDir == "" {
			return fmt.Errorf("--bin-dir is required: run hack/cluster/up.sh, which builds the binaries first")
		}
		if err := c.up(ctx, upOptions{binDir: *binDir, nodeMonitorGracePeriod: *grace, signingDuration: *signing, auditLog: *auditLog}); err != nil {
			return err
		}
		if *foreground {
			return c.waitThenDown()
		}
		return nil
	case "down":
		return c.down()
	case "status":
		return c.status(ctx)
	case "stop-component":
		return c.stopComponent(component)
	case "start-component":
		return c.startComponent(ctx, component)
	case "metrics-server":
		if *msBin == "" {
			return fmt.Errorf("--metrics-server-bin is required: run hack/cluster/up.sh metrics-server, which builds it first")
		}
		return c.metricsServer(ctx, metricsServerOptions{bin: *msBin, resolution: *resolution})
	default:
		return fmt.Errorf("unknown verb %q: use up, down, status, stop-component, start-component or metrics-server", verb)
	}
}

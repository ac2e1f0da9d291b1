// Command csi-hostpath runs the small hostpath-like CSI node plugin of tools/csi-hostpath/driver
// beside a minikubelet: it registers itself through <root-dir>/plugins_registry, as
// node-driver-registrar does for a real driver, and serves until interrupted. It prints each Node
// call it gets. In a container (test/e2e/containerd runs it as a DaemonSet from the image
// hack/containerd/images.sh --csi-hostpath builds), give it <root-dir>/plugins_registry,
// <root-dir>/plugins/<name>, <root-dir>/pods and the data directory as hostPath volumes at the
// same paths as on the node: it publishes a volume as a link to the data directory, no mount.
//
//	csi-hostpath --root-dir /var/lib/minikubelet --node-id node-1 --data-dir /tmp/csi-data
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/minikubelet/minikubelet/tools/csi-hostpath/driver"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "csi-hostpath:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("csi-hostpath", flag.ContinueOnError)
	name := fs.String("name", "hostpath.csi.minikubelet.dev", "the driver's name (a CSIDriver object of this name sets its policy)")
	root := fs.String("root-dir", "", "the kubelet's --root-dir (required): the registration socket goes to its plugins_registry")
	nodeID := fs.String("node-id", "", "the node id NodeGetInfo answers (required)")
	dataDir := fs.String("data-dir", "", "where volumes' directories live (required)")
	stage := fs.Bool("stage", true, "advertise STAGE_UNSTAGE_VOLUME")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" || *nodeID == "" || *dataDir == "" {
		return fmt.Errorf("--root-dir, --node-id and --data-dir are required")
	}
	pluginDir := filepath.Join(*root, "plugins", *name)
	if err := os.MkdirAll(pluginDir, 0o750); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(*root, "plugins_registry"), 0o750); err != nil {
		return err
	}
	d, err := driver.Start(driver.Config{Name: *name, NodeID: *nodeID, Endpoint: filepath.Join(pluginDir, "csi.sock"),
		RegistryDir: filepath.Join(*root, "plugins_registry"), DataDir: *dataDir, Stage: *stage, Log: os.Stdout})
	if err != nil {
		return err
	}
	defer d.Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

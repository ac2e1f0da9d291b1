// Package driver is a small hostpath-like CSI node plugin for tests and labs: Identity and Node
// services on one socket, and the registration service node-driver-registrar serves in
// <kubelet root>/plugins_registry. A volume is a directory under DataDir, named after its
// volume id; staging makes it, publishing links the target path to it (the fake runtime serves
// the link's directory as the mount), unpublishing removes the link and keeps the data.
// Every call is recorded, so tests can see what the kubelet asked for.
//
// The links are why the driver needs no mount propagation when it runs in a container (a
// DaemonSet on containerd): given the kubelet's directories and its data directory at the same
// paths as on the node, a link it makes names the node's directory, and the runtime resolves it
// when it bind-mounts the target into the pod. A driver that mounts needs its target directories
// mounted with mountPropagation Bidirectional instead, so the node sees its mounts.
package driver

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// Config is the driver's setup.
type Config struct {
	Name        string // the driver's name, e.g. hostpath.csi.minikubelet.dev
	NodeID      string // what NodeGetInfo answers
	Endpoint    string // the CSI socket to listen on
	RegistryDir string // the kubelet's <root-dir>/plugins_registry; <Name>-reg.sock goes there
	DataDir     string // where volumes' directories live
	Stage       bool   // advertise STAGE_UNSTAGE_VOLUME
	// Log, if set, gets each recorded call, one per line (the command logs them to stdout, so
	// `kubectl logs` of the driver's pod shows what the kubelet asked for).
	Log io.Writer
}

// Driver is a running driver.
type Driver struct {
	csipb.UnimplementedIdentityServer
	csipb.UnimplementedNodeServer
	registerapi.UnimplementedRegistrationServer
	cfg     Config
	servers []*grpc.Server

	mu         sync.Mutex
	calls      []string // "NodePublishVolume <id> <target>" and the like
	registered *registerapi.RegistrationStatus
}

// Start serves the CSI socket, then the registration socket, until Stop.
func Start(cfg Config) (*Driver, error) {
	d := &Driver{cfg: cfg}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, err
	}
	csiServer := grpc.NewServer()
	csipb.RegisterIdentityServer(csiServer, d)
	csipb.RegisterNodeServer(csiServer, d)
	if err := serve(csiServer, cfg.Endpoint); err != nil {
		return nil, err
	}
	reg := grpc.NewServer()
	registerapi.RegisterRegistrationServer(reg, d)
	d.servers = []*grpc.Server{csiServer, reg}
	if err := serve(reg, filepath.Join(cfg.RegistryDir, cfg.Name+"-reg.sock")); err != nil {
		d.Stop()
		return nil, err
	}
	return d, nil
}

func serve(s *grpc.Server, socket string) error {
	_ = os.Remove(socket)
	l, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", socket, err)
	}
	go func() { _ = s.Serve(l) }()
	return nil
}

// Stop stops serving; the registration socket goes, so the kubelet deregisters the driver.
func (d *Driver) Stop() {
	for _, s := range d.servers {
		s.Stop()
	}
}

// Calls returns the Node calls made so far.
func (d *Driver) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// Registered is the kubelet's last NotifyRegistrationStatus, or nil.
func (d *Driver) Registered() *registerapi.RegistrationStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.registered
}

func (d *Driver) record(call string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, call)
	if d.cfg.Log != nil {
		_, _ = fmt.Fprintln(d.cfg.Log, call)
	}
}

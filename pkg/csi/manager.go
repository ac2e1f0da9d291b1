package csi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// csiTimeout bounds each CSI call (upstream csiTimeout, 2 min).
const csiTimeout = 2 * time.Minute

// Config is what the Manager needs.
type Config struct {
	RootDir  string               // --root-dir: <RootDir>/plugins_registry is watched, volumes go under pods/ and plugins/
	NodeName string               // the Node and CSINode this kubelet keeps
	Client   kubernetes.Interface // the node's client: Node, CSINode, CSIDriver, VolumeAttachment
	Clock    clock.Clock          // nil is the real clock
}

// driver is one registered CSI driver.
type driver struct {
	name     string
	endpoint string // the driver's CSI socket
	socket   string // its registration socket in the registry directory
}

// Manager registers CSI drivers and sets up their volumes: see the package documentation.
type Manager struct {
	cfg         Config
	csiNodeMade bool // the CSINode exists (only Run's goroutine reads and writes it)

	mu       sync.Mutex
	drivers  map[string]*driver         // registered drivers by name
	bySocket map[string]*driver         // the same, by registration socket
	failedAt map[string]time.Time       // sockets whose registration failed, and when
	staged   map[string]map[string]bool // staging path → target paths published from it
}

// New validates cfg and makes the Manager; nothing runs until Run.
func New(cfg Config) (*Manager, error) {
	if cfg.RootDir == "" || cfg.NodeName == "" || cfg.Client == nil {
		return nil, errors.New("csi: RootDir, NodeName and Client are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, drivers: map[string]*driver{}, bySocket: map[string]*driver{},
		failedAt: map[string]time.Time{}, staged: map[string]map[string]bool{}}, nil
}

// registryDir is where plugins put their registration sockets (upstream
// <root-dir>/plugins_registry).
func (m *Manager) registryDir() string { return filepath.Join(m.cfg.RootDir, "plugins_registry") }

// Run makes the registry directory, then each second makes sure the CSINode exists and watches
// the directory (watchOnce), until ctx ends.
func (m *Manager) Run(ctx context.Context) error {
	if err := os.MkdirAll(m.registryDir(), 0o750); err != nil {
		return fmt.Errorf("create plugin registry: %w", err)
	}
	wait.UntilWithContext(ctx, m.runOnce, time.Second)
	return nil
}

// runOnce is one turn of Run: the CSINode first (the Node may not exist yet), then the watcher.
func (m *Manager) runOnce(ctx context.Context) {
	if !m.csiNodeMade {
		if err := m.ensureCSINode(ctx); err != nil {
			klog.FromContext(ctx).Error(err, "Create CSINode", "node", m.cfg.NodeName)
			return
		}
		m.csiNodeMade = true
	}
	m.watchOnce(ctx)
}

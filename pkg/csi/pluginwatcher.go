package csi

// The plugin watcher and the registration handshake (upstream pkg/kubelet/pluginmanager:
// pluginwatcher/plugin_watcher.go, operationexecutor/operation_generator.go
// GenerateRegisterPluginFunc, and pkg/volume/csi/csi_plugin.go's RegistrationHandler).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// registrationTimeout bounds each call to a plugin's registration socket (upstream's
// dialTimeoutDuration and the context of GenerateRegisterPluginFunc, 1 s each).
const registrationTimeout = time.Second

// watchOnce is one turn of the watcher: each socket new in the registry directory is registered,
// and each driver whose socket went is deregistered (upstream: fsnotify Create/Delete events fed
// to the desired state of world, reconciled every second; we list the directory instead).
func (m *Manager) watchOnce(ctx context.Context) {
	logger := klog.FromContext(ctx)
	sockets, err := registrySockets(m.registryDir())
	if err != nil {
		logger.Error(err, "List plugin registry", "dir", m.registryDir())
		return
	}
	m.mu.Lock()
	var gone []*driver
	for socket, d := range m.bySocket {
		if !sockets[socket] {
			gone = append(gone, d)
			delete(m.bySocket, socket)
		}
	}
	m.mu.Unlock()
	for _, d := range gone {
		m.deregister(ctx, d)
	}
	for socket := range sockets {
		m.mu.Lock()
		_, known := m.bySocket[socket]
		m.mu.Unlock()
		if !known && !m.failed(socket) {
			m.registerSocket(ctx, socket)
		}
	}
}

// registrySockets lists the sockets in dir (upstream skips regular files and dot-files).
func registrySockets(dir string) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	sockets := map[string]bool{}
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 && !strings.HasPrefix(e.Name(), ".") {
			sockets[filepath.Join(dir, e.Name())] = true
		}
	}
	return sockets, nil
}

// failed reports whether the socket failed to register less than a minute ago, so a broken
// plugin is not dialed every second.
func (m *Manager) failed(socket string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.failedAt[socket]
	return ok && m.cfg.Clock.Since(at) < time.Minute
}

// registerSocket asks the plugin who it is, validates and registers it, and tells it the
// outcome (upstream GenerateRegisterPluginFunc).
func (m *Manager) registerSocket(ctx context.Context, socket string) {
	logger := klog.FromContext(ctx)
	conn, err := dial(socket)
	if err != nil {
		logger.Error(err, "Dial plugin registration socket", "socket", socket)
		return
	}
	defer func() { _ = conn.Close() }()
	client := registerapi.NewRegistrationClient(conn)
	callCtx, cancel := context.WithTimeout(ctx, registrationTimeout)
	defer cancel()
	info, err := client.GetInfo(callCtx, &registerapi.InfoRequest{})
	if err != nil {
		m.markFailed(socket)
		logger.Error(err, "RegisterPlugin error -- failed to get plugin info using RPC GetInfo", "socket", socket)
		return
	}
	err = m.register(ctx, socket, info)
	status := &registerapi.RegistrationStatus{PluginRegistered: err == nil}
	if err != nil {
		m.markFailed(socket)
		status.Error = err.Error()
		logger.Error(err, "RegisterPlugin error", "socket", socket, "plugin", info.Name)
	} else {
		logger.Info("Register new plugin", "plugin", info.Name, "endpoint", m.endpoint(info.Name))
	}
	if _, nerr := client.NotifyRegistrationStatus(callCtx, status); nerr != nil {
		logger.Error(nerr, "Notify plugin of its registration status", "plugin", info.Name)
	}
}

func (m *Manager) markFailed(socket string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failedAt[socket] = m.cfg.Clock.Now()
}

// register validates a CSI plugin's info and registers it: its endpoint is kept and the node
// info manager adds it to the CSINode (upstream RegistrationHandler.ValidatePlugin and
// RegisterPlugin).
func (m *Manager) register(ctx context.Context, socket string, info *registerapi.PluginInfo) error {
	if info.Type != registerapi.CSIPlugin {
		return fmt.Errorf("plugin type %q is not supported: minikubelet registers only %q plugins", info.Type, registerapi.CSIPlugin)
	}
	if info.Name == "" {
		return fmt.Errorf("plugin name is empty")
	}
	if !slices.ContainsFunc(info.SupportedVersions, supportedVersion) {
		return fmt.Errorf("validation failed for CSI Driver %s at endpoint %s: none of the versions specified %q are supported; use 1.x", info.Name, info.Endpoint, info.SupportedVersions)
	}
	endpoint := info.Endpoint
	if endpoint == "" {
		endpoint = socket
	}
	d := &driver{name: info.Name, endpoint: endpoint, socket: socket}
	callCtx, cancel := context.WithTimeout(ctx, csiTimeout)
	defer cancel()
	node, err := nodeGetInfo(callCtx, endpoint)
	if err != nil {
		return fmt.Errorf("error during CSI NodeGetInfo() call: %w", err)
	}
	if node.nodeID == "" {
		return fmt.Errorf("error during CSI NodeGetInfo() call: node ID is empty")
	}
	if err := m.addNodeInfo(ctx, d.name, node); err != nil {
		return fmt.Errorf("error updating CSI node info for driver %s: %w", d.name, err)
	}
	m.mu.Lock()
	m.drivers[d.name] = d
	m.bySocket[socket] = d
	delete(m.failedAt, socket)
	m.mu.Unlock()
	return nil
}

// supportedVersion is upstream's check: a version 1.x (or 0.x before 1.0, long gone).
func supportedVersion(v string) bool {
	v = strings.TrimPrefix(v, "v")
	return v == "1" || strings.HasPrefix(v, "1.")
}

// deregister forgets a driver whose socket went and removes it from the CSINode (upstream
// DeRegisterPlugin).
func (m *Manager) deregister(ctx context.Context, d *driver) {
	m.mu.Lock()
	if m.drivers[d.name] == d {
		delete(m.drivers, d.name)
	}
	m.mu.Unlock()
	logger := klog.FromContext(ctx)
	logger.Info("Deregister plugin", "plugin", d.name)
	if err := m.removeNodeInfo(ctx, d.name); err != nil {
		logger.Error(err, "Remove CSI driver from node info", "driver", d.name)
	}
}

// endpoint is the registered driver's socket, or "".
func (m *Manager) endpoint(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.drivers[name]; ok {
		return d.endpoint
	}
	return ""
}

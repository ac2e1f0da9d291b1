package csi

// SetUp and TearDown: stage once per node, publish per pod; unpublish, and unstage with the last
// pod (upstream operation_generator's MountDevice/SetUp and TearDown/UnmountDevice).

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

type csiAccessMode = csipb.VolumeCapability_AccessMode_Mode

const accessSingleNodeWriter = csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER

// accessModeOf maps a PV's first access mode to CSI's (upstream asCSIAccessModeV1).
func accessModeOf(modes []corev1.PersistentVolumeAccessMode) csiAccessMode {
	if len(modes) == 0 {
		return accessSingleNodeWriter
	}
	switch modes[0] {
	case corev1.ReadOnlyMany:
		return csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
	case corev1.ReadWriteMany:
		return csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	case corev1.ReadWriteOncePod:
		return csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER
	}
	return accessSingleNodeWriter
}

func capability(s source) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: s.fsType}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: s.accessMode},
	}
}

// SetUp makes the pod's CSI volume ready and returns its target path, which the runtime
// bind-mounts into the containers.
func (m *Manager) SetUp(ctx context.Context, pod *corev1.Pod, v Volume) (string, error) {
	s, err := sourceOf(pod.UID, v)
	if err != nil {
		return "", err
	}
	endpoint, err := m.registered(s.driver)
	if err != nil {
		return "", err
	}
	p, err := m.policy(ctx, s.driver)
	if err != nil {
		return "", err
	}
	if err := checkMode(p, s); err != nil {
		return "", err
	}
	if s.secrets {
		return "", fmt.Errorf("volume %s of driver %s has a secret reference, which minikubelet does not pass to CSI drivers yet (docs/features.md#volumes)", v.Name, s.driver)
	}
	if s.mode == "Persistent" && p.attachRequired {
		if err := m.checkAttached(ctx, s); err != nil {
			return "", err
		}
	}
	staging := ""
	if s.mode == "Persistent" {
		if staging, err = m.stage(ctx, endpoint, s); err != nil {
			return "", err
		}
	}
	attrs := maps.Clone(s.attributes)
	if p.podInfoOnMount {
		if attrs == nil {
			attrs = map[string]string{}
		}
		maps.Copy(attrs, podAttributes(pod, s))
	}
	target := m.targetPath(pod.UID, v.Name)
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return "", fmt.Errorf("create volume directory: %w", err)
	}
	callCtx, cancel := context.WithTimeout(ctx, csiTimeout)
	defer cancel()
	if err := withNode(endpoint, func(c csipb.NodeClient) error {
		_, err := c.NodePublishVolume(callCtx, &csipb.NodePublishVolumeRequest{VolumeId: s.handle,
			StagingTargetPath: staging, TargetPath: target, VolumeCapability: capability(s),
			Readonly: s.readOnly, VolumeContext: attrs})
		return err
	}); err != nil {
		return "", fmt.Errorf("rpc error: NodePublishVolume: %w", err)
	}
	m.noteStaged(staging, target, true)
	return target, nil
}

// stage calls NodeStageVolume when the driver has STAGE_UNSTAGE_VOLUME and the volume is not
// staged yet; it returns the staging path, or "" for a driver that does not stage.
func (m *Manager) stage(ctx context.Context, endpoint string, s source) (string, error) {
	callCtx, cancel := context.WithTimeout(ctx, csiTimeout)
	defer cancel()
	ok, err := supportsStage(callCtx, endpoint)
	if err != nil {
		return "", fmt.Errorf("NodeGetCapabilities of driver %s: %w", s.driver, err)
	}
	if !ok {
		klog.FromContext(ctx).V(4).Info("Driver does not stage; skipping MountDevice", "driver", s.driver)
		return "", nil
	}
	staging := m.stagingPath(s)
	m.mu.Lock()
	_, done := m.staged[staging]
	m.mu.Unlock()
	if done {
		return staging, nil
	}
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return "", fmt.Errorf("create staging directory: %w", err)
	}
	if err := withNode(endpoint, func(c csipb.NodeClient) error {
		_, err := c.NodeStageVolume(callCtx, &csipb.NodeStageVolumeRequest{VolumeId: s.handle,
			StagingTargetPath: staging, VolumeCapability: capability(s), VolumeContext: s.attributes})
		return err
	}); err != nil {
		return "", fmt.Errorf("MountVolume.MountDevice failed: rpc error: NodeStageVolume: %w", err)
	}
	m.noteStaged(staging, "", true)
	return staging, nil
}

// noteStaged records (add) or forgets a target published from a staging path; "" staging is
// a driver that does not stage.
func (m *Manager) noteStaged(staging, target string, add bool) (last bool) {
	if staging == "" {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	targets, ok := m.staged[staging]
	if !ok {
		if !add {
			return false
		}
		targets = map[string]bool{}
		m.staged[staging] = targets
	}
	if target == "" {
		return false
	}
	if add {
		targets[target] = true
		return false
	}
	delete(targets, target)
	return len(targets) == 0
}

// TearDown unpublishes the pod's volume and, once no pod on the node uses it, unstages it.
func (m *Manager) TearDown(ctx context.Context, uid types.UID, v Volume) error {
	s, err := sourceOf(uid, v)
	if err != nil {
		return err
	}
	target := m.targetPath(uid, v.Name)
	if _, err := os.Lstat(filepath.Dir(target)); os.IsNotExist(err) {
		return nil // never set up, or torn down already
	}
	endpoint, err := m.registered(s.driver)
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, csiTimeout)
	defer cancel()
	if err := withNode(endpoint, func(c csipb.NodeClient) error {
		_, err := c.NodeUnpublishVolume(callCtx, &csipb.NodeUnpublishVolumeRequest{VolumeId: s.handle, TargetPath: target})
		return err
	}); err != nil {
		return fmt.Errorf("UnmountVolume.TearDown failed: rpc error: NodeUnpublishVolume: %w", err)
	}
	if err := removeDirs(target); err != nil {
		return err
	}
	staging := m.stagingPath(s)
	if !m.noteStaged(staging, target, false) {
		return nil
	}
	if err := withNode(endpoint, func(c csipb.NodeClient) error {
		_, err := c.NodeUnstageVolume(callCtx, &csipb.NodeUnstageVolumeRequest{VolumeId: s.handle, StagingTargetPath: staging})
		return err
	}); err != nil {
		return fmt.Errorf("UnmountDevice failed: rpc error: NodeUnstageVolume: %w", err)
	}
	m.mu.Lock()
	delete(m.staged, staging)
	m.mu.Unlock()
	return removeDirs(staging)
}

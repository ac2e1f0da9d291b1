package csi

// A pod's CSI volume (upstream pkg/volume/csi: csi_plugin.go NewMounter/ConstructVolumeSpec's
// lifecycle-mode check, csi_attacher.go MountDevice/UnmountDevice and waitForVolumeAttachment,
// csi_mounter.go SetUpAt/TearDownAt with podAttributes).

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Volume is one CSI volume of a pod: a PersistentVolume with a csi source, or an inline csi
// volume of the pod.
type Volume struct {
	Name     string                   // the PV's name, or the pod's volume name inline (upstream specVolumeID)
	PV       *corev1.PersistentVolume // the bound PV; nil inline
	Inline   *corev1.CSIVolumeSource  // the pod's csi volume; nil for a PV
	ReadOnly bool                     // the claim's readOnly
}

// MountReadOnly reports whether the volume is published, and so mounted into every container,
// read-only (upstream csiMountMgr.GetAttributes().ReadOnly, which makeMounts enforces): an
// inline volume's readOnly; for a PV the claim's readOnly, or the PV's csi.readOnly.
func (v Volume) MountReadOnly() bool {
	if v.Inline != nil {
		return v.Inline.ReadOnly != nil && *v.Inline.ReadOnly
	}
	return v.ReadOnly || (v.PV != nil && v.PV.Spec.CSI != nil && v.PV.Spec.CSI.ReadOnly)
}

// source is what a CSI call needs of a Volume.
type source struct {
	driver, handle string
	readOnly       bool
	fsType         string
	attributes     map[string]string
	mode           storagev1.VolumeLifecycleMode
	accessMode     csiAccessMode
	secrets        bool // some secret reference is set
}

// sourceOf reads the Volume for a pod (an inline volume's handle is made from the pod's UID and
// the volume's name, as upstream makeVolumeHandle does).
func sourceOf(uid types.UID, v Volume) (source, error) {
	if v.Inline != nil {
		s := source{driver: v.Inline.Driver, handle: fmt.Sprintf("csi-%x", sha256.Sum256([]byte(string(uid)+v.Name))),
			attributes: v.Inline.VolumeAttributes, mode: storagev1.VolumeLifecycleEphemeral,
			accessMode: accessSingleNodeWriter, secrets: v.Inline.NodePublishSecretRef != nil, readOnly: v.MountReadOnly()}
		if v.Inline.FSType != nil {
			s.fsType = *v.Inline.FSType
		}
		return s, nil
	}
	if v.PV == nil || v.PV.Spec.CSI == nil {
		return source{}, errors.New("volume is not a CSI volume")
	}
	c := v.PV.Spec.CSI
	return source{driver: c.Driver, handle: c.VolumeHandle, readOnly: v.MountReadOnly(), fsType: c.FSType,
		attributes: c.VolumeAttributes, mode: storagev1.VolumeLifecyclePersistent,
		accessMode: accessModeOf(v.PV.Spec.AccessModes),
		secrets:    c.NodeStageSecretRef != nil || c.NodePublishSecretRef != nil}, nil
}

// targetPath is where the driver publishes the volume for the pod (upstream
// <root>/pods/<uid>/volumes/kubernetes.io~csi/<volume>/mount).
func (m *Manager) targetPath(uid types.UID, name string) string {
	return filepath.Join(m.cfg.RootDir, "pods", string(uid), "volumes", "kubernetes.io~csi", name, "mount")
}

// stagingPath is where the driver stages the volume once for the node (upstream
// <root>/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount).
func (m *Manager) stagingPath(s source) string {
	return filepath.Join(m.cfg.RootDir, "plugins", "kubernetes.io", "csi", s.driver,
		fmt.Sprintf("%x", sha256.Sum256([]byte(s.handle))), "globalmount")
}

// registered is the driver's endpoint, or upstream's error.
func (m *Manager) registered(name string) (string, error) {
	if ep := m.endpoint(name); ep != "" {
		return ep, nil
	}
	return "", fmt.Errorf("driver name %s not found in the list of registered CSI drivers", name)
}

// driverPolicy is what the CSIDriver object says; without one, upstream's defaults: attach
// required, no pod info, persistent volumes only.
type driverPolicy struct {
	attachRequired bool
	podInfoOnMount bool
	modes          []storagev1.VolumeLifecycleMode
}

func (m *Manager) policy(ctx context.Context, name string) (driverPolicy, error) {
	p := driverPolicy{attachRequired: true, modes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}}
	d, err := m.cfg.Client.StorageV1().CSIDrivers().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return p, nil
	}
	if err != nil {
		return p, fmt.Errorf("get CSIDriver %s: %w", name, err)
	}
	if d.Spec.AttachRequired != nil {
		p.attachRequired = *d.Spec.AttachRequired
	}
	if d.Spec.PodInfoOnMount != nil {
		p.podInfoOnMount = *d.Spec.PodInfoOnMount
	}
	if len(d.Spec.VolumeLifecycleModes) > 0 {
		p.modes = d.Spec.VolumeLifecycleModes
	}
	return p, nil
}

// checkMode is upstream supportsVolumeLifecycleMode.
func checkMode(p driverPolicy, s source) error {
	for _, mode := range p.modes {
		if mode == s.mode {
			return nil
		}
	}
	return fmt.Errorf("volume mode %q not supported by driver %s (only supports %q)", s.mode, s.driver, p.modes)
}

// checkAttached is upstream waitForVolumeAttachment, one look: the VolumeAttachment
// csi-<sha256(handle+driver+node)> must say attached. Nothing in minikubelet creates it; an
// attach/detach controller and the driver's external-attacher do.
func (m *Manager) checkAttached(ctx context.Context, s source) error {
	name := fmt.Sprintf("csi-%x", sha256.Sum256([]byte(s.handle+s.driver+m.cfg.NodeName)))
	va, err := m.cfg.Client.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("volume attachment %s for driver %s (CSIDriver says attachRequired: true; set it false for a driver that needs no attach): %w", name, s.driver, err)
	}
	if !va.Status.Attached {
		return fmt.Errorf("volume %s has not been attached yet (VolumeAttachment %s)", s.handle, name)
	}
	return nil
}

// podAttributes is what podInfoOnMount adds to the volume context (upstream podAttributes).
func podAttributes(pod *corev1.Pod, s source) map[string]string {
	attrs := map[string]string{
		"csi.storage.k8s.io/pod.name":            pod.Name,
		"csi.storage.k8s.io/pod.namespace":       pod.Namespace,
		"csi.storage.k8s.io/pod.uid":             string(pod.UID),
		"csi.storage.k8s.io/serviceAccount.name": pod.Spec.ServiceAccountName,
	}
	if s.mode == storagev1.VolumeLifecycleEphemeral {
		attrs["csi.storage.k8s.io/ephemeral"] = "true"
	}
	return attrs
}

// removeDirs removes the target path (an empty directory or a link the driver left) and its
// volume directory; never a directory with content, which may still be the volume's data.
func removeDirs(target string) error {
	for _, dir := range []string{target, filepath.Dir(target)} {
		if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	}
	return nil
}

package volumemanager

// The CSI plugin (upstream pkg/volume/csi/csi_plugin.go): a PersistentVolume with a csi source
// or an inline csi volume, set up by pkg/csi through the driver's Node service.

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/pkg/csi"
)

// CSIVolumes sets up and tears down CSI volumes (pkg/csi's Manager).
type CSIVolumes interface {
	// SetUp stages and publishes the volume for the pod and returns its target path; it calls
	// the driver and may block for as long as the driver takes.
	SetUp(ctx context.Context, pod *corev1.Pod, v csi.Volume) (string, error)
	// TearDown unpublishes it (and unstages it with the last pod); a volume gone is no error.
	TearDown(ctx context.Context, uid types.UID, v csi.Volume) error
}

var _ CSIVolumes = (*csi.Manager)(nil)

type csiPlugin struct{ volumes CSIVolumes }

func (csiPlugin) canSupport(spec volumeSpec) bool {
	if spec.pv != nil {
		return spec.pv.Spec.CSI != nil
	}
	return spec.volume.CSI != nil
}

func (csiPlugin) requiresRemount(volumeSpec) bool { return false }

func (p csiPlugin) setUp(ctx context.Context, pod *corev1.Pod, spec volumeSpec) (string, error) {
	return p.volumes.SetUp(ctx, pod, csiVolume(spec))
}

func (p csiPlugin) tearDown(uid types.UID, spec volumeSpec) error {
	return p.volumes.TearDown(context.Background(), uid, csiVolume(spec))
}

// csiVolume is the spec as pkg/csi reads it.
func csiVolume(spec volumeSpec) csi.Volume {
	if spec.pv != nil {
		return csi.Volume{Name: spec.pv.Name, PV: spec.pv, ReadOnly: spec.readOnly}
	}
	return csi.Volume{Name: spec.volume.Name, Inline: spec.volume.CSI}
}

// mountReadOnly reports whether every container mounts the volume read-only (upstream makeMounts
// with the mounter's GetAttributes().ReadOnly): the claim's readOnly, and for CSI also the PV's
// or the inline volume's readOnly, as the driver was asked to publish it.
func (s volumeSpec) mountReadOnly() bool {
	if (s.pv != nil && s.pv.Spec.CSI != nil) || (s.pv == nil && s.volume.CSI != nil) {
		return csiVolume(s).MountReadOnly()
	}
	return s.readOnly
}

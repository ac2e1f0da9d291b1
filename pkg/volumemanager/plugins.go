package volumemanager

// The plugins (upstream: pkg/volume/<type>/ and the VolumePluginMgr that picks one per spec):
// the writers of pkg/volume for inline volumes, and hostPath and local PersistentVolumes.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/pkg/volume"
)

// plugin sets up and tears down the volumes of its types (upstream: VolumePlugin with its
// Mounter and Unmounter). Calls for one volume never overlap (the reconciler runs one operation
// per volume at a time); calls for different volumes may.
type plugin interface {
	// canSupport reports whether the plugin handles the spec.
	canSupport(spec volumeSpec) bool
	// requiresRemount reports whether the volume's content follows API objects, so it is set up
	// again on every pod sync.
	requiresRemount(spec volumeSpec) bool
	// setUp makes the volume ready and returns the host path the runtime bind-mounts; it may
	// call the API server. Calling it again on a set-up volume brings it up to date.
	setUp(ctx context.Context, pod *corev1.Pod, spec volumeSpec) (string, error)
	// tearDown removes what setUp made; a volume already gone is not an error.
	tearDown(uid types.UID, spec volumeSpec) error
}

// projectorPlugin is pkg/volume's Projector: secret, configMap, projected, downwardAPI,
// emptyDir and inline hostPath volumes, and hostPath PersistentVolumes (upstream's hostPath
// plugin serves both).
type projectorPlugin struct{ projector *volume.Projector }

func (p projectorPlugin) canSupport(spec volumeSpec) bool {
	if spec.pv != nil {
		return spec.pv.Spec.HostPath != nil
	}
	return volume.Handles(spec.volume)
}

func (p projectorPlugin) requiresRemount(spec volumeSpec) bool {
	return spec.pv == nil && volume.RequiresRemount(spec.volume)
}

func (p projectorPlugin) setUp(ctx context.Context, pod *corev1.Pod, spec volumeSpec) (string, error) {
	return p.projector.SetUpVolume(ctx, pod, inlineVolume(spec))
}

func (p projectorPlugin) tearDown(uid types.UID, spec volumeSpec) error {
	return p.projector.TearDownVolume(uid, inlineVolume(spec))
}

// inlineVolume is the spec as a pod volume: a hostPath PV becomes a hostPath volume of the pod's
// volume name, with the PV's path and type checks.
func inlineVolume(spec volumeSpec) *corev1.Volume {
	if spec.pv == nil {
		return spec.volume
	}
	return &corev1.Volume{Name: spec.volume.Name, VolumeSource: corev1.VolumeSource{HostPath: spec.pv.Spec.HostPath}}
}

// localPlugin is a `local` PersistentVolume: a path on this node that must exist (upstream
// pkg/volume/local, which bind-mounts it into the pod's volume directory; the runtime
// bind-mounts it straight into the container here). The PV's node affinity, checked before
// every mount, keeps it on its node. A path with a ".." element is refused ("invalid path:
// /a/../b must not contain '..'", upstream's SetUpAt with validation.ValidatePathNoBacksteps).
type localPlugin struct{}

func (localPlugin) canSupport(spec volumeSpec) bool {
	return spec.pv != nil && spec.pv.Spec.Local != nil
}
func (localPlugin) requiresRemount(volumeSpec) bool      { return false }
func (localPlugin) tearDown(types.UID, volumeSpec) error { return nil }

func (localPlugin) setUp(_ context.Context, _ *corev1.Pod, spec volumeSpec) (string, error) {
	path := spec.pv.Spec.Local.Path
	if path == "" {
		return "", fmt.Errorf("LocalVolume volume %q path is empty", spec.pv.Name)
	}
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return "", fmt.Errorf("invalid path: %s must not contain '..'", path)
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("local volume path of %q: %w", spec.pv.Name, err)
	}
	return path, nil
}

// findPlugin returns the plugin for the spec, or upstream's error with what minikubelet lacks.
func findPlugin(plugins []plugin, spec volumeSpec) (plugin, error) {
	for _, p := range plugins {
		if p.canSupport(spec) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("failed to get Plugin from volumeSpec for volume %q err=no volume plugin matched: %s", spec.name(), unsupported(spec))
}

// supportedDoc is where the documentation lists the volume types minikubelet handles.
const supportedDoc = "docs/features.md#volumes"

// unsupported says which type is missing and where the supported ones are listed.
func unsupported(spec volumeSpec) string {
	if spec.pv != nil {
		return fmt.Sprintf("PersistentVolume %q is of type %s, which minikubelet does not support (only hostPath, local and csi PersistentVolumes; %s lists what is supported)",
			spec.pv.Name, sourceType(reflect.ValueOf(spec.pv.Spec.PersistentVolumeSource)), supportedDoc)
	}
	return fmt.Sprintf("volume type %s is not supported by minikubelet (%s lists what is supported)",
		sourceType(reflect.ValueOf(spec.volume.VolumeSource)), supportedDoc)
}

// sourceType is the JSON name of the one field set in a VolumeSource or a
// PersistentVolumeSource ("nfs", "csi", …), as a manifest spells it.
func sourceType(v reflect.Value) string {
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "(none set)"
}

// typeName is the volume's type as a manifest spells it: "configMap", "emptyDir", or
// "persistentVolumeClaim → hostPath" for a claim bound to a hostPath PV.
func (s volumeSpec) typeName() string {
	inline := sourceType(reflect.ValueOf(s.volume.VolumeSource))
	if s.pv == nil {
		return inline
	}
	return inline + " → " + sourceType(reflect.ValueOf(s.pv.Spec.PersistentVolumeSource))
}

// MetricsSource is how a volume's usage is measured (upstream: each plugin's MetricsProvider).
type MetricsSource int

const (
	// MetricsNone: not measured (upstream MetricsNil for hostPath; CSI's NodeGetVolumeStats is
	// not called by minikubelet).
	MetricsNone MetricsSource = iota
	// MetricsDu: the volume's own files are walked (emptyDir, secret, configMap, projected,
	// downwardAPI: upstream MetricsDu).
	MetricsDu
	// MetricsStatFS: the volume is a filesystem of its own (a local PV: upstream MetricsStatFS).
	MetricsStatFS
)

// metrics is how the plugin of the spec measures it.
func (s volumeSpec) metrics() MetricsSource {
	switch {
	case s.pv != nil && s.pv.Spec.Local != nil:
		return MetricsStatFS
	case s.pv != nil, s.volume.HostPath != nil, s.volume.CSI != nil:
		return MetricsNone
	case volume.Handles(s.volume):
		return MetricsDu
	}
	return MetricsNone
}

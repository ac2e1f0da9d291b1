package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Plugin directory names: upstream's plugin names ("kubernetes.io/secret") with "/" escaped
// as "~" (utilstrings.EscapeQualifiedName), so tools that know the kubelet's layout find them.
const (
	SecretPluginDir      = "kubernetes.io~secret"
	ConfigMapPluginDir   = "kubernetes.io~configmap"
	ProjectedPluginDir   = "kubernetes.io~projected"
	DownwardAPIPluginDir = "kubernetes.io~downward-api"
	EmptyDirPluginDir    = "kubernetes.io~empty-dir"
)

// Config configures a Projector.
type Config struct {
	// RootDir is the kubelet's --root-dir; volumes live under <RootDir>/pods/<uid>/volumes.
	// Required, absolute.
	RootDir string
	// GetSecret and GetConfigMap return an object of the pod's namespace (in the kubelet: the
	// secret and configmap managers). They may block on the API server; the caller must not
	// modify the returned object. A missing object is (nil, nil) or a NotFound error. Required.
	GetSecret    func(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	GetConfigMap func(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	// GetServiceAccountToken returns a token of service account namespace/name as tr asks (in
	// the kubelet: the token manager, which caches it and requests a new one at 80 % of its
	// TTL). It may block on the API server; the caller must not modify the result. Required.
	GetServiceAccountToken func(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	// NodeAllocatable is the node's allocatable: a downward API resourceFieldRef to a limit the
	// container does not set reads it (upstream GetNodeAllocatable). Optional.
	NodeAllocatable corev1.ResourceList
	// Mounter mounts the tmpfs of emptyDirs with medium Memory (a real runtime's kubelet:
	// HostMounter). Nil (the fake runtime, which never touches host mounts): such an emptyDir is
	// a plain directory.
	Mounter Mounter
	// Clock stamps the hidden data directories. nil means the real clock.
	Clock clock.PassiveClock
}

// Projector writes a pod's API-data volumes (secret, configMap, projected, downwardAPI) and
// creates its emptyDirs: upstream's secret/configmap/projected/downwardapi/empty_dir plugins,
// which pkg/volumemanager's reconciler calls.
//
// Calls for one volume must not overlap (the reconciler runs one operation per volume at a
// time), and CleanupPod runs only once none of the pod's volumes is set up; calls for different
// volumes may run concurrently.
type Projector struct {
	cfg    Config
	writer AtomicWriter
}

// New validates cfg and fills its defaults.
func New(cfg Config) (*Projector, error) {
	if cfg.RootDir == "" || !filepath.IsAbs(cfg.RootDir) {
		return nil, fmt.Errorf("volume: RootDir must be an absolute path, got %q", cfg.RootDir)
	}
	if cfg.GetSecret == nil || cfg.GetConfigMap == nil || cfg.GetServiceAccountToken == nil {
		return nil, errors.New("volume: GetSecret, GetConfigMap and GetServiceAccountToken are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Projector{cfg: cfg, writer: AtomicWriter{Clock: cfg.Clock}}, nil
}

// Handles reports whether SetUpVolume knows the volume's type: secret, configMap, projected,
// downwardAPI, emptyDir or hostPath. The volume manager matches its plugins with it.
func Handles(vol *corev1.Volume) bool {
	return vol.Secret != nil || vol.ConfigMap != nil || vol.Projected != nil || vol.DownwardAPI != nil ||
		vol.EmptyDir != nil || vol.HostPath != nil
}

// RequiresRemount reports whether the volume's content follows API objects (secret, configMap,
// projected, downwardAPI), so SetUpVolume must run again on every pod sync to bring a changed
// Secret, ConfigMap, label or refreshed token into its files (upstream: the plugins'
// RequiresRemount).
func RequiresRemount(vol *corev1.Volume) bool {
	return vol.Secret != nil || vol.ConfigMap != nil || vol.Projected != nil || vol.DownwardAPI != nil
}

// SetUpVolume sets up one volume of the pod and returns its host directory: writes an API-data
// volume, makes an emptyDir, checks a hostPath. Calling it again (on every pod sync) rewrites
// only what changed, atomically. The volume manager's reconciler calls it, one volume at a time,
// and names a failure as upstream's events do:
//
//	MountVolume.SetUp failed for volume "creds" : secret "db-pass" not found
//
// A type Handles refuses is an error.
func (p *Projector) SetUpVolume(ctx context.Context, pod *corev1.Pod, vol *corev1.Volume) (string, error) {
	if err := checkPathElement("pod UID", string(pod.UID)); err != nil {
		return "", err
	}
	if err := checkPathElement("volume name", vol.Name); err != nil {
		return "", err
	}
	var (
		plugin  string
		payload map[string]FileProjection
		err     error
	)
	switch {
	case vol.EmptyDir != nil:
		return p.setUpEmptyDir(ctx, pod, vol) // emptydir.go: a directory, or a tmpfs for medium Memory
	case vol.Secret != nil:
		plugin = SecretPluginDir
		var s *corev1.Secret
		if s, err = p.cfg.GetSecret(ctx, pod.Namespace, vol.Secret.SecretName); apierrors.IsNotFound(err) {
			s, err = nil, nil
		}
		if err != nil {
			return "", fmt.Errorf("couldn't get secret %s/%s: %w", pod.Namespace, vol.Secret.SecretName, err)
		}
		payload, err = SecretPayload(vol.Secret, s)
	case vol.ConfigMap != nil:
		plugin = ConfigMapPluginDir
		var cm *corev1.ConfigMap
		if cm, err = p.cfg.GetConfigMap(ctx, pod.Namespace, vol.ConfigMap.Name); apierrors.IsNotFound(err) {
			cm, err = nil, nil
		}
		if err != nil {
			return "", fmt.Errorf("couldn't get configMap %s/%s: %w", pod.Namespace, vol.ConfigMap.Name, err)
		}
		payload, err = ConfigMapPayload(vol.ConfigMap, cm)
	case vol.Projected != nil:
		plugin = ProjectedPluginDir
		payload, err = ProjectedPayload(vol.Projected,
			func(name string) (*corev1.Secret, error) { return p.cfg.GetSecret(ctx, pod.Namespace, name) },
			func(name string) (*corev1.ConfigMap, error) { return p.cfg.GetConfigMap(ctx, pod.Namespace, name) },
			func(sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
				return p.cfg.GetServiceAccountToken(ctx, pod.Namespace, sa, tr)
			},
			pod, p.cfg.NodeAllocatable)
	case vol.DownwardAPI != nil:
		plugin = DownwardAPIPluginDir
		payload, err = DownwardAPIPayload(vol.DownwardAPI, pod, p.cfg.NodeAllocatable)
	case vol.HostPath != nil:
		return setUpHostPath(vol.HostPath) // host_path.go: the node's own path, nothing written
	default:
		return "", fmt.Errorf("volume %q: its type is none of secret, configMap, projected, downwardAPI, emptyDir and hostPath", vol.Name)
	}
	if err != nil {
		return "", err
	}

	dir := p.podVolumeDir(pod.UID, plugin, vol.Name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var setPerms func() error
	if fsGroup := podFSGroup(pod); fsGroup != nil {
		payload = fsGroupModes(payload)
		// The whole volume, not only the new version: the first write also made dir.
		setPerms = func() error { return setVolumeOwnership(ctx, dir, *fsGroup, true) }
	}
	changed, err := p.writer.Write(ctx, dir, payload, setPerms)
	if err != nil {
		return "", err
	}
	if changed {
		klog.FromContext(ctx).V(2).Info("Volume contents updated", "pod", klog.KObj(pod), "volume", vol.Name, "plugin", plugin, "files", len(payload))
	}
	return dir, nil
}

// TearDownVolume removes what SetUpVolume made for the volume: the directory of an API-data
// volume or an emptyDir (upstream: the plugins' TearDownAt). A hostPath is the node's own path
// and stays. A missing directory is not an error.
func (p *Projector) TearDownVolume(uid types.UID, vol *corev1.Volume) error {
	if err := checkPathElement("pod UID", string(uid)); err != nil {
		return err
	}
	if err := checkPathElement("volume name", vol.Name); err != nil {
		return err
	}
	var plugin string
	switch {
	case vol.EmptyDir != nil:
		if err := p.tearDownEmptyDir(uid, vol.Name); err != nil {
			return fmt.Errorf("remove volume %q of pod %s: %w", vol.Name, uid, err)
		}
		return nil
	case vol.Secret != nil:
		plugin = SecretPluginDir
	case vol.ConfigMap != nil:
		plugin = ConfigMapPluginDir
	case vol.Projected != nil:
		plugin = ProjectedPluginDir
	case vol.DownwardAPI != nil:
		plugin = DownwardAPIPluginDir
	default:
		return nil
	}
	if err := os.RemoveAll(p.podVolumeDir(uid, plugin, vol.Name)); err != nil {
		return fmt.Errorf("remove volume %q of pod %s: %w", vol.Name, uid, err)
	}
	return nil
}

// CleanupPod removes <root>/pods/<uid> with all its volumes, after unmounting any tmpfs left
// on its emptyDirs. Call it once the pod's containers are gone; a missing directory is not an
// error.
func (p *Projector) CleanupPod(uid types.UID) error {
	if err := checkPathElement("pod UID", string(uid)); err != nil {
		return err
	}
	if err := p.unmountEmptyDirs(uid); err != nil {
		return fmt.Errorf("unmount the emptyDirs of pod %s: %w", uid, err)
	}
	if err := os.RemoveAll(p.podDir(uid)); err != nil {
		return fmt.Errorf("remove pod directory of %s: %w", uid, err)
	}
	return nil
}

func (p *Projector) podDir(uid types.UID) string {
	return filepath.Join(p.cfg.RootDir, "pods", string(uid))
}

// podVolumeDir is <root>/pods/<uid>/volumes/<plugin>/<name>, upstream's GetPodVolumeDir.
func (p *Projector) podVolumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(p.podDir(uid), "volumes", plugin, name)
}

// checkPathElement refuses names that would escape their directory: a pod UID "" or "..",
// or a volume name "a/b", must never reach filepath.Join and os.RemoveAll.
func checkPathElement(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("invalid %s %q: must be a single non-empty path element", what, name)
	}
	return nil
}

// Mount is one bind mount of a volume into a container.
type Mount struct {
	ContainerPath string
	HostPath      string
	ReadOnly      bool
}

// Mounts maps the container's volumeMounts to host paths (from SetUpVolume), in order. Mounts of
// volumes with no host directory are left out. As upstream makeMounts, API-data volumes (secret,
// configMap, projected, downwardAPI) are always read-only. A mount with subPath or subPathExpr
// gets the file or directory it names inside the volume (subpath.go); its error is the
// container's CreateContainerConfigError.
func Mounts(pod *corev1.Pod, c *corev1.Container, hostDirs map[string]string, cfg MountConfig) ([]Mount, error) {
	var mounts []Mount
	for i, m := range c.VolumeMounts {
		host, ok := hostDirs[m.Name]
		if !ok {
			continue
		}
		host, err := subPathSource(pod, c, i, cfg, host)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, Mount{
			ContainerPath: m.MountPath,
			HostPath:      host,
			ReadOnly:      m.ReadOnly || isAPIDataVolume(pod, m.Name),
		})
	}
	return mounts, nil
}

func isAPIDataVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return v.Secret != nil || v.ConfigMap != nil || v.Projected != nil || v.DownwardAPI != nil
		}
	}
	return false
}

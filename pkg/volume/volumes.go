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
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
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
	// Clock stamps the hidden data directories. nil means the real clock.
	Clock clock.PassiveClock
}

// Projector writes a pod's API-data volumes (secret, configMap, projected, downwardAPI) and
// creates its emptyDirs. It is a volume manager without mounts: upstream's
// volumemanager + the secret/configmap/projected/downwardapi/empty_dir plugins.
//
// SetUpPod and CleanupPod for one pod must not overlap (one pod worker per pod guarantees it);
// calls for different pods may run concurrently.
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

// SetUpPod writes every volume of the pod it handles and returns volume name → host directory.
// Calling it again (on every pod sync) rewrites only volumes whose objects changed, atomically.
// A volume that fails does not stop the others: the map holds those that succeeded, and the
// error names each failure as upstream's events do:
//
//	MountVolume.SetUp failed for volume "creds" : secret "db-pass" not found
//
// Volume types other than secret, configMap, projected, downwardAPI, emptyDir and hostPath are skipped
// (logged at V(2)) and have no entry in the map.
func (p *Projector) SetUpPod(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	logger := klog.FromContext(ctx)
	if err := checkPathElement("pod UID", string(pod.UID)); err != nil {
		return nil, err
	}
	dirs := make(map[string]string, len(pod.Spec.Volumes))
	var errs []error
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		dir, err := p.setUpVolume(ctx, pod, vol)
		if err != nil {
			errs = append(errs, fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", vol.Name, err)) // upstream's spacing
			continue
		}
		if dir == "" {
			logger.V(2).Info("Skipping volume of a type minikubelet does not handle", "pod", klog.KObj(pod), "volume", vol.Name)
			continue
		}
		dirs[vol.Name] = dir
	}
	return dirs, utilerrors.NewAggregate(errs)
}

// setUpVolume sets up one volume and returns its host directory, or "" for a type we skip.
func (p *Projector) setUpVolume(ctx context.Context, pod *corev1.Pod, vol *corev1.Volume) (string, error) {
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
		dir := p.podVolumeDir(pod.UID, EmptyDirPluginDir, vol.Name)
		// 0777 as upstream's emptyDir: any container user may write there.
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return "", err
		}
		return dir, os.Chmod(dir, 0o777)
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
			pod)
	case vol.DownwardAPI != nil:
		plugin = DownwardAPIPluginDir
		payload, err = DownwardAPIPayload(vol.DownwardAPI, pod)
	case vol.HostPath != nil:
		return setUpHostPath(vol.HostPath) // host_path.go: the node's own path, nothing written
	default:
		return "", nil
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
	changed, err := p.writer.Write(ctx, dir, payload)
	if err != nil {
		return "", err
	}
	if changed {
		klog.FromContext(ctx).V(2).Info("Volume contents updated", "pod", klog.KObj(pod), "volume", vol.Name, "plugin", plugin, "files", len(payload))
	}
	return dir, nil
}

// CleanupPod removes <root>/pods/<uid> with all its volumes. Call it once the pod's
// containers are gone; a missing directory is not an error.
func (p *Projector) CleanupPod(uid types.UID) error {
	if err := checkPathElement("pod UID", string(uid)); err != nil {
		return err
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

// Mounts maps the container's volumeMounts to host paths (from SetUpPod), in order. Mounts of
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

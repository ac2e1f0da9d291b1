package volume

// emptyDir (upstream pkg/volume/emptydir/empty_dir.go): a directory of the pod on the node's
// disk, or, with medium Memory, a tmpfs mounted on that directory, sized by
// calculateEmptyDirMemorySize, and unmounted at teardown. Hugepages are not managed by
// minikubelet, so a HugePages medium is refused.
//
// The built-in fake runtime runs no process and reads a volume's files straight from its host
// directory, so a Config without a Mounter (the fake runtime's) makes a memory-backed emptyDir a
// plain directory, as the documentation says (docs/fake-runtime.md).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/pkg/cm"
)

// Mounter mounts and unmounts the tmpfs of memory-backed emptyDirs (upstream: mount.Interface).
// Calls may block briefly on the kernel.
type Mounter interface {
	// MountTmpfs mounts a new tmpfs at dir; sizeBytes > 0 caps it (size=), 0 leaves the kernel's
	// default.
	MountTmpfs(dir string, sizeBytes int64) error
	// Unmount unmounts the filesystem mounted at dir.
	Unmount(dir string) error
	// IsMountPoint reports whether a filesystem is mounted at dir; a missing dir is an error
	// for which os.IsNotExist holds.
	IsMountPoint(dir string) (bool, error)
}

// HostMounter mounts with mount(2) in the kubelet's own mount namespace; the runtime must share
// that namespace to see the tmpfs (as containerd beside the kubelet does). It needs
// CAP_SYS_ADMIN.
type HostMounter struct{}

var _ Mounter = HostMounter{}

// MountTmpfs mounts tmpfs at dir, as `mount -t tmpfs -o size=N tmpfs dir`.
func (HostMounter) MountTmpfs(dir string, sizeBytes int64) error {
	data := ""
	if sizeBytes > 0 {
		data = fmt.Sprintf("size=%d", sizeBytes)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, data); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("mount tmpfs at %s: %w: the kubelet needs CAP_SYS_ADMIN (run it as root) to mount an emptyDir with medium Memory", dir, err)
		}
		return fmt.Errorf("mount tmpfs at %s: %w", dir, err)
	}
	return nil
}

// IsMountPoint reports whether dir is on another device than its parent (upstream
// IsLikelyNotMountPoint, inverted): a tmpfs mounted there always is.
func (HostMounter) IsMountPoint(dir string) (bool, error) { return isMountPoint(dir) }

// Unmount unmounts dir.
func (HostMounter) Unmount(dir string) error {
	if err := unix.Unmount(dir, 0); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// setUpEmptyDir makes the emptyDir's directory, 0777 as upstream's so any container user may
// write there, mounts a tmpfs on it for medium Memory, then gives it to the pod's fsGroup if it
// sets one (upstream emptyDir SetUpAt: setupDir or setupTmpfs, then the volume's ownership). The
// reconciler calls it once per volume (an emptyDir does not follow API objects); a tmpfs already
// mounted there (a restarted kubelet) is kept.
func (p *Projector) setUpEmptyDir(ctx context.Context, pod *corev1.Pod, vol *corev1.Volume) (string, error) {
	dir := p.podVolumeDir(pod.UID, EmptyDirPluginDir, vol.Name)
	medium := vol.EmptyDir.Medium
	switch {
	case medium == corev1.StorageMediumDefault, medium == corev1.StorageMediumMemory:
	case medium == corev1.StorageMediumHugePages || strings.HasPrefix(string(medium), string(corev1.StorageMediumHugePagesPrefix)):
		return "", fmt.Errorf("emptyDir medium %q is not supported by minikubelet: it does not manage hugepages (use medium \"\" or Memory; %s lists what is supported)",
			medium, "docs/features.md#volumes")
	default:
		return "", fmt.Errorf("unknown storage medium %q", medium) // upstream's SetUpAt
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return "", err
	}
	if medium == corev1.StorageMediumMemory && p.cfg.Mounter != nil {
		if err := p.mountTmpfs(pod, vol, dir); err != nil {
			return "", err
		}
	}
	if fsGroup := podFSGroup(pod); fsGroup != nil {
		return dir, setVolumeOwnership(ctx, dir, *fsGroup, false)
	}
	return dir, nil
}

// mountTmpfs mounts the memory-backed emptyDir's tmpfs at dir, unless one is mounted there.
func (p *Projector) mountTmpfs(pod *corev1.Pod, vol *corev1.Volume, dir string) error {
	if mounted, err := p.cfg.Mounter.IsMountPoint(dir); err != nil || mounted {
		return err
	}
	size := EmptyDirMemorySize(p.cfg.NodeAllocatable.Memory(), vol, pod)
	return p.cfg.Mounter.MountTmpfs(dir, size.Value())
}

// EmptyDirMemorySize is the size of a memory-backed emptyDir's tmpfs (upstream
// calculateEmptyDirMemorySize): the node's allocatable memory, or the pod's memory limit if
// smaller, or the volume's sizeLimit if smaller still. Pure.
func EmptyDirMemorySize(nodeAllocatable *resource.Quantity, vol *corev1.Volume, pod *corev1.Pod) resource.Quantity {
	size := nodeAllocatable.DeepCopy()
	if limit, ok := cm.PodMemoryLimit(pod); ok && limit > 0 && (size.IsZero() || limit <= size.Value()) {
		size = *resource.NewQuantity(limit, resource.BinarySI)
	}
	if l := vol.EmptyDir.SizeLimit; l != nil && l.Sign() > 0 && (size.IsZero() || l.Cmp(size) <= 0) {
		size = l.DeepCopy()
	}
	return size
}

// tearDownEmptyDir unmounts the emptyDir's tmpfs if it has one, then removes its directory.
func (p *Projector) tearDownEmptyDir(uid types.UID, name string) error {
	dir := p.podVolumeDir(uid, EmptyDirPluginDir, name)
	if err := p.unmountIfMounted(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// unmountEmptyDirs unmounts every tmpfs left on the pod's emptyDirs (a kubelet restarted
// forgets what it mounted), so removing the pod's directory never reaches into a mount.
func (p *Projector) unmountEmptyDirs(uid types.UID) error {
	plugin := filepath.Join(p.podDir(uid), "volumes", EmptyDirPluginDir)
	entries, err := os.ReadDir(plugin)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, p.unmountIfMounted(filepath.Join(plugin, e.Name())))
	}
	return errors.Join(errs...)
}

func (p *Projector) unmountIfMounted(dir string) error {
	isMounted := isMountPoint
	if p.cfg.Mounter != nil {
		isMounted = p.cfg.Mounter.IsMountPoint
	}
	mounted, err := isMounted(dir)
	switch {
	case os.IsNotExist(err), err == nil && !mounted:
		return nil
	case err != nil:
		return err
	case p.cfg.Mounter == nil:
		return fmt.Errorf("%s is a mount point, and this kubelet mounts nothing (the fake runtime): unmount it by hand", dir)
	}
	return p.cfg.Mounter.Unmount(dir)
}

// isMountPoint reports whether dir is on another device than its parent.
func isMountPoint(dir string) (bool, error) {
	var st, parent syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return false, &os.PathError{Op: "lstat", Path: dir, Err: err}
	}
	if err := syscall.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, &os.PathError{Op: "lstat", Path: filepath.Dir(dir), Err: err}
	}
	return st.Dev != parent.Dev, nil
}

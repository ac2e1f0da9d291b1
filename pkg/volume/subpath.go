package volume

// subPath and subPathExpr: mounting one file or directory of a volume instead of all of it, without
// ever leaving the volume (upstream: pkg/kubelet/kubelet_pods.go makeMounts, the subPath checks;
// kubelet/container/helpers.go ExpandContainerVolumeMounts; pkg/volume/util/subpath/
// subpath_linux.go SafeMakeDir, doSafeMakeDir, doBindSubPath, safeOpenSubPath, doSafeOpen,
// prepareSubpathTarget).
//
// The danger (CVE-2017-1002101, CVE-2021-25741): a container that can write the volume (an
// emptyDir, a hostPath) makes "escape -> /" and another container mounts subPath "escape"; a
// kubelet that joins paths and hands them to the runtime mounts the node's root. So the path is
// resolved once, checked to stay inside the volume, then opened component by component with
// O_NOFOLLOW from the volume's directory: a component swapped for a symlink in between is refused.
//
//	makeMounts checks      subPath relative, no ".." element; subPathExpr expanded from the env
//	SafeMakeDir            a missing subPath is made a directory, inside the volume only
//	doBindSubPath          EvalSymlinks, within the volume?, doSafeOpen → an fd of the real thing
//	                       upstream: bind-mount /proc/<pid>/fd/<fd> at
//	                       <pod>/volume-subpaths/<volume>/<container>/<index>
//	ours                   a file: hard-link /proc/self/fd/<fd> there (the same inode, pinned)
//	                       a directory: the checked real path (a symlink swapped in before the
//	                       runtime's CreateContainer is not caught: doc.go, "Simplified")
//
// Pinning a file means what upstream's bind mount means: the container keeps the version it
// started with. A ConfigMap key's file is "..<timestamp>/key" behind "key -> ..data/key"; the
// atomic writer never rewrites a file in place, it writes a new directory and removes the old
// one, so the pinned inode keeps the old content when the ConfigMap changes, and a restarted
// container gets the new version (the pin is replaced when the path resolves to another file).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minikubelet/minikubelet/pkg/container"
)

// subPathsDir is upstream's containerSubPathDirectoryName, under the pod's directory.
const subPathsDir = "volume-subpaths"

// MountConfig is what Mounts needs besides the pod, the container and the volume directories.
type MountConfig struct {
	// PodDir is <root>/pods/<uid>: a file named by a subPath is pinned under its volume-subpaths.
	PodDir string
	// Env is the container's environment (MakeEnvironment): subPathExpr's $(VAR)s.
	Env []EnvVar
}

// subPathSource returns where volume mount i of c comes from: volDir itself without a subPath,
// else the file or directory the subPath names inside it, resolved safely. Its errors are
// upstream's, the container's CreateContainerConfigError message; the details of a refused path
// say too much about the node's filesystem for the pod's status, so they go into the error chain
// only after upstream's words.
func subPathSource(pod *corev1.Pod, c *corev1.Container, i int, cfg MountConfig, volDir string) (string, error) {
	m := &c.VolumeMounts[i]
	sub, err := expandSubPath(pod, c, i, cfg.Env)
	if err != nil || sub == "" {
		return volDir, err
	}
	if err := safeMakeDir(volDir, sub); err != nil {
		return "", &subPathError{fmt.Sprintf("failed to create subPath directory for volumeMount %q of container %q", m.Name, c.Name), err}
	}
	pin := filepath.Join(cfg.PodDir, subPathsDir, m.Name, c.Name, strconv.Itoa(i))
	src, err := prepareSubPath(volDir, sub, pin)
	if err != nil {
		return "", &subPathError{fmt.Sprintf("failed to prepare subPath for volumeMount %q of container %q", m.Name, c.Name), err}
	}
	return src, nil
}

// subPathError is upstream's message for the user, with the cause kept for the kubelet's log.
type subPathError struct {
	msg   string
	cause error
}

func (e *subPathError) Error() string { return e.msg }
func (e *subPathError) Unwrap() error { return e.cause }

// expandSubPath is makeMounts' first step: the subPath (subPathExpr expanded with the
// container's env, every $(VAR) of which must be set and non-empty), relative and without "..".
// subPath and subPathExpr together are refused as the API server's validation refuses them (a
// static pod's manifest does not pass through it).
func expandSubPath(pod *corev1.Pod, c *corev1.Container, i int, env []EnvVar) (string, error) {
	m := &c.VolumeMounts[i]
	sub := m.SubPath
	if m.SubPathExpr != "" {
		if m.SubPath != "" {
			return "", field.Invalid(containerField(pod, c).Child("volumeMounts").Index(i).Child("subPathExpr"),
				m.SubPathExpr, "subPathExpr and subPath are mutually exclusive")
		}
		vars := make(map[string]string, len(env))
		for _, e := range env {
			vars[e.Name] = e.Value
		}
		missing := map[string]bool{}
		sub = container.Expand(m.SubPathExpr, func(name string) (string, bool) {
			v, ok := vars[name]
			if !ok || v == "" {
				missing[name] = true
			}
			return v, ok
		})
		if len(missing) > 0 {
			names := make([]string, 0, len(missing))
			for n := range missing {
				names = append(names, n)
			}
			sort.Strings(names)
			return "", fmt.Errorf("missing value for %s", strings.Join(names, ", "))
		}
	}
	if sub == "" {
		return "", nil
	}
	if filepath.IsAbs(sub) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	if slices.Contains(strings.Split(sub, "/"), "..") {
		return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
	}
	return sub, nil
}

// containerField is the field path of c in pod's spec, as the API server's errors name it.
func containerField(pod *corev1.Pod, c *corev1.Container) *field.Path {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == c.Name {
			return field.NewPath("spec", "initContainers").Index(i)
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == c.Name {
			return field.NewPath("spec", "containers").Index(i)
		}
	}
	return field.NewPath("spec", "containers").Key(c.Name)
}

// withinBase says whether path (clean, absolute) is base or below it (mount.PathWithinBase).
func withinBase(path, base string) bool {
	rel, err := filepath.Rel(base, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// safeOpen opens path, which must be inside base, one component at a time from base with
// O_NOFOLLOW, and returns an O_PATH fd of it (upstream doSafeOpen). A symlink on the way — one
// swapped in since path was resolved — is refused. The caller closes the fd.
func safeOpen(path, base string) (int, error) {
	rel, err := filepath.Rel(base, path)
	if err != nil || !withinBase(path, base) {
		return -1, fmt.Errorf("path %s is outside of allowed base %s", path, base)
	}
	fd, err := unix.Open(base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("cannot open directory %s: %w", base, err)
	}
	if rel == "." {
		return fd, nil
	}
	current := base
	for _, seg := range strings.Split(rel, "/") {
		current = filepath.Join(current, seg)
		child, err := unix.Openat(fd, seg, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		_ = unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("cannot open %s: %w", current, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(child, &st); err != nil {
			_ = unix.Close(child)
			return -1, fmt.Errorf("error running fstat on %s: %w", current, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK { // O_PATH|O_NOFOLLOW opens the link itself
			_ = unix.Close(child)
			return -1, fmt.Errorf("unexpected symlink found %s", current)
		}
		fd = child
	}
	return fd, nil
}

// safeMakeDir makes the missing directories of subPath inside volDir, with volDir's mode, as
// upstream's SafeMakeDir: the part that exists is resolved and must stay in the volume; the rest
// is made with mkdirat from an fd opened by safeOpen, each new directory opened O_NOFOLLOW in turn.
// An existing subPath (file or directory) is left as it is.
func safeMakeDir(volDir, subPath string) error {
	base, err := filepath.EvalSymlinks(volDir)
	if err != nil {
		return fmt.Errorf("error resolving symlinks in %s: %w", volDir, err)
	}
	fi, err := os.Stat(base)
	if err != nil {
		return err
	}
	perm := kernelMode(fi.Mode())
	parts := strings.Split(filepath.Clean(subPath), "/")
	n := len(parts) // parts[:n] exist
	for ; n > 0; n-- {
		if _, err := os.Stat(filepath.Join(base, filepath.Join(parts[:n]...))); err == nil {
			break
		}
	}
	if n == len(parts) {
		return nil
	}
	existing, err := filepath.EvalSymlinks(filepath.Join(base, filepath.Join(parts[:n]...)))
	if err != nil {
		return fmt.Errorf("error opening directory %s: %w", existing, err)
	}
	fd, err := safeOpen(existing, base)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	for _, dir := range parts[n:] {
		if err := unix.Mkdirat(fd, dir, perm); err != nil {
			return fmt.Errorf("cannot create directory %s: %w", dir, err)
		}
		child, err := unix.Openat(fd, dir, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("cannot open %s: %w", dir, err)
		}
		_ = unix.Close(fd)
		fd = child
		if err := unix.Fchmod(fd, perm); err != nil { // mkdirat's mode went through the umask
			return fmt.Errorf("chmod %s: %w", dir, err)
		}
	}
	return nil
}

// kernelMode is mode's permission bits with setuid, setgid and sticky as chmod(2) takes them
// (os.FileMode keeps those three apart from the permission bits). A subPath directory made in an
// emptyDir that the pod's fsGroup owns gets the setgid bit, as the volume has it.
func kernelMode(mode os.FileMode) uint32 {
	m := uint32(mode.Perm())
	if mode&os.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if mode&os.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if mode&os.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}

// prepareSubPath resolves subPath inside volDir and returns the mount's source: a directory's
// checked real path, or a file pinned at pin (upstream doBindSubPath, safeOpenSubPath,
// prepareSubpathTarget).
func prepareSubPath(volDir, subPath, pin string) (string, error) {
	base, err := filepath.EvalSymlinks(volDir)
	if err != nil {
		return "", fmt.Errorf("error resolving symlinks in %q: %w", volDir, err)
	}
	path, err := filepath.EvalSymlinks(filepath.Join(volDir, subPath))
	if err != nil {
		return "", fmt.Errorf("error resolving symlinks in %q: %w", filepath.Join(volDir, subPath), err)
	}
	if !withinBase(path, base) {
		return "", fmt.Errorf("subpath %q not within volume path %q", path, base)
	}
	fd, err := safeOpen(path, base)
	if err != nil {
		return "", fmt.Errorf("error opening subpath %v: %w", path, err)
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return path, nil
	}
	pinned, err := pinFile(fd, pin)
	if errors.Is(err, unix.EXDEV) {
		// A hostPath volume on another filesystem than the kubelet's root: no hard link across
		// filesystems, so the checked path itself (upstream's bind mount has no such limit).
		return path, nil
	}
	return pinned, err
}

// pinFile hard-links the file open as fd at pin, so pin is that very inode however the volume
// changes later (a link through /proc/self/fd follows the fd, not a path). A pin that is already
// this file is kept (the container restarts with the same version); another one is replaced.
func pinFile(fd int, pin string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(pin), 0o750); err != nil {
		return "", fmt.Errorf("error creating directory %s: %w", filepath.Dir(pin), err)
	}
	var st, old unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if unix.Lstat(pin, &old) == nil && old.Dev == st.Dev && old.Ino == st.Ino {
		return pin, nil
	}
	tmp := pin + ".tmp"
	_ = os.Remove(tmp)
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW); err != nil {
		return "", fmt.Errorf("error pinning subpath file at %s: %w", pin, err)
	}
	if err := os.RemoveAll(pin); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.Rename(tmp, pin); err != nil {
		return "", err
	}
	return pin, nil
}

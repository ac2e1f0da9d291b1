package fakeruntime

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The host side of a container's filesystem: which CRI mount a path is in, and how an operation
// reaches the mounted host file or directory without leaving it. Errors carry busybox's words.

// hostMount is one CRI mount of a container, its source resolved when the container is created,
// as a runtime's bind mount resolves it once: a symlink swapped in later on the way to it — a
// directory of a writable volume that another container replaced by "ln -s /" after the kubelet
// checked a subPath — is never followed (onHost refuses it).
type hostMount struct {
	*runtimeapi.Mount
	source string // HostPath without symlinks, at create; "" if it did not exist then
}

// newHostMount resolves m's source.
func newHostMount(m *runtimeapi.Mount) *hostMount {
	source, err := filepath.EvalSymlinks(m.GetHostPath())
	if err != nil {
		source = ""
	}
	return &hostMount{Mount: m, source: source}
}

// mountFor finds the mount p is in and p relative to its ContainerPath ("." for the mount point).
func (f *rootfs) mountFor(p string) (*hostMount, string) {
	var best *hostMount
	rel := ""
	for _, m := range f.mounts {
		cp := path.Clean("/" + m.GetContainerPath())
		r, ok := strings.CutPrefix(p, strings.TrimSuffix(cp, "/")+"/")
		if p == cp {
			r, ok = ".", true
		}
		if ok && (best == nil || len(cp) > len(path.Clean("/"+best.GetContainerPath()))) {
			best, rel = m, r
		}
	}
	return best, rel
}

// holdsMount says whether a mount point lies at or below p: such a directory exists, and can
// be neither removed nor replaced ("Resource busy").
func (f *rootfs) holdsMount(p string) bool {
	for _, m := range f.mounts {
		cp := path.Clean("/" + m.GetContainerPath())
		if cp == p || p == "/" || strings.HasPrefix(cp, p+"/") {
			return true
		}
	}
	return false
}

// pathError is what every operation returns: the container's path and an errno.
func pathError(op, p string, err error) error {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
	case errors.Is(err, fs.ErrNotExist):
		errno = syscall.ENOENT
	default: // e.g. os.Root refusing a symlink that leads out of the mount
		errno = syscall.EACCES
	}
	return &fs.PathError{Op: op, Path: p, Err: errno}
}

// errText is an error's errno as busybox prints it: "No such file or directory".
func errText(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	return strings.ToUpper(s[:1]) + s[1:]
}

// onHost runs op on the host side of a mounted path: name inside root, a directory confined
// with os.Root so that no symlink leads out of the mount. The mount's source is opened with
// openat2 RESOLVE_NO_SYMLINKS at its path resolved at create, so a symlink swapped in since is
// refused ("Too many levels of symbolic links"), and a source missing at create stays missing.
// A file mount is opened at its directory, and only the mount point itself can be named.
func onHost(m *hostMount, rel string, write bool, op func(root *os.Root, name string) error) error {
	if write && m.GetReadonly() {
		return syscall.EROFS
	}
	if m.source == "" {
		return syscall.ENOENT
	}
	fd, err := openNoSymlinks(m.source)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	name := filepath.FromSlash(rel)
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if rel != "." {
			return syscall.ENOTDIR
		}
		pfd, err := openNoSymlinks(filepath.Dir(m.source))
		if err != nil {
			return err
		}
		defer func() { _ = unix.Close(pfd) }()
		fd, name = pfd, filepath.Base(m.source)
	}
	// The magic link names the directory fd holds, whatever its path has become.
	root, err := os.OpenRoot("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return op(root, name)
}

// openNoSymlinks opens path (absolute) as an O_PATH fd, refusing a symlink anywhere on it.
func openNoSymlinks(path string) (int, error) {
	return unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
}

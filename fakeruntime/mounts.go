package fakeruntime

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The host side of a container's filesystem: which CRI mount a path is in, and how an operation
// reaches the mounted host file or directory without leaving it. Errors carry busybox's words.

// mountFor finds the mount p is in and p relative to its ContainerPath ("." for the mount point).
func (f *rootfs) mountFor(p string) (*runtimeapi.Mount, string) {
	var best *runtimeapi.Mount
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
// with os.Root so that no symlink leads out of the mount. A file mount is opened at its
// directory, and only the mount point itself can be named.
func onHost(m *runtimeapi.Mount, rel string, write bool, op func(root *os.Root, name string) error) error {
	if write && m.GetReadonly() {
		return syscall.EROFS
	}
	dir, name := m.GetHostPath(), filepath.FromSlash(rel)
	if fi, err := os.Stat(dir); err != nil {
		return err
	} else if !fi.IsDir() {
		if rel != "." {
			return syscall.ENOTDIR
		}
		dir, name = filepath.Dir(dir), filepath.Base(dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return op(root, name)
}

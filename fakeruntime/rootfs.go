package fakeruntime

import (
	"errors"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The container's filesystem: what touch, rm, mkdir, cat, ls, test and `echo … > F` act on — in
// the container's own program, in ExecSync and exec sessions — and what `serve` answers with.
// doc.go's "Filesystem" tells the model: CRI mounts over an in-memory layer.

const (
	// maxCatBytes bounds what one read returns: enough for any Secret or ConfigMap (1 MiB).
	maxCatBytes = 1 << 20
	// maxLayerBytes bounds the content of a container's in-memory layer; beyond it writes fail
	// with "No space left on device".
	maxLayerBytes = 16 << 20
)

// baseDirs are the directories every container's layer starts with, as in a busybox image.
func baseDirs() []string {
	return []string{"/", "/bin", "/dev", "/etc", "/home", "/proc", "/root", "/run", "/sys", "/tmp",
		"/usr", "/usr/bin", "/usr/share", "/var", "/var/log", "/var/run"}
}

// fileKind is what a path names.
type fileKind int

const (
	kindFile fileKind = iota
	kindDir
	kindNull // /dev/null: reads nothing, swallows writes
)

// layerFile is one file or directory of the in-memory layer.
type layerFile struct {
	kind fileKind
	data []byte
}

// rootfs is one container instance's filesystem. A path under one of its CRI mounts is the
// mounted host file or directory (the longest matching ContainerPath wins; a read-only mount
// refuses writes); every other path lives in an in-memory layer that dies with the container.
// Errors are *fs.PathError with the container's path and a syscall.Errno, so commands print
// busybox's messages. Safe for concurrent use.
type rootfs struct {
	mounts  []*hostMount // from the CRI config; never changed
	workDir string       // where relative paths start
	*layerState
}

// layerState is the in-memory layer, shared by the views of one filesystem from several working
// directories (rootfs.in: the shell's cd).
type layerState struct {
	mu    sync.Mutex
	layer map[string]*layerFile // by clean absolute path
	size  int                   // bytes of file content in layer
}

// in is the same filesystem seen from directory dir (the shell's cd): relative paths start there.
func (f *rootfs) in(dir string) *rootfs {
	g := *f
	g.workDir = f.abs(dir)
	return &g
}

// newRootfs builds the filesystem of a container with these CRI mounts and working directory.
func newRootfs(mounts []*runtimeapi.Mount, workDir string) *rootfs {
	f := &rootfs{workDir: "/", layerState: &layerState{layer: map[string]*layerFile{"/dev/null": {kind: kindNull}}}}
	for _, m := range mounts {
		if m.GetContainerPath() != "" && m.GetHostPath() != "" {
			f.mounts = append(f.mounts, newHostMount(m))
		}
	}
	for _, d := range baseDirs() {
		f.layer[d] = &layerFile{kind: kindDir}
	}
	if workDir != "" {
		f.workDir = path.Clean("/" + workDir)
		_ = f.mkdir(f.workDir, true) // a runtime creates a missing WorkingDir
	}
	return f
}

// abs makes p absolute (relative to the working directory) and clean; ".." never climbs above /.
func (f *rootfs) abs(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = f.workDir + "/" + p
	}
	return path.Clean(p)
}

// stat says what p is.
func (f *rootfs) stat(p string) (fileKind, error) {
	p = f.abs(p)
	if m, rel := f.mountFor(p); m != nil {
		kind := kindFile
		err := onHost(m, rel, false, func(root *os.Root, name string) error {
			fi, err := root.Stat(name)
			if err == nil && fi.IsDir() {
				kind = kindDir
			}
			return err
		})
		if err != nil {
			return 0, pathError("stat", p, err)
		}
		return kind, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.layer[p]; e != nil {
		return e.kind, nil
	}
	if f.holdsMount(p) {
		return kindDir, nil
	}
	return 0, pathError("stat", p, syscall.ENOENT)
}

// readFile returns at most maxCatBytes of a regular file.
func (f *rootfs) readFile(p string) ([]byte, error) {
	p = f.abs(p)
	if m, rel := f.mountFor(p); m != nil {
		var data []byte
		err := onHost(m, rel, false, func(root *os.Root, name string) error {
			// O_NONBLOCK: opening a FIFO must not wait for a writer.
			file, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			defer file.Close()
			if fi, err := file.Stat(); err != nil || fi.IsDir() {
				return syscall.EISDIR
			} else if !fi.Mode().IsRegular() {
				return syscall.EINVAL
			}
			data, err = io.ReadAll(io.LimitReader(file, maxCatBytes))
			return err
		})
		if err != nil {
			return nil, pathError("open", p, err)
		}
		return data, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch e := f.layer[p]; {
	case e == nil && f.holdsMount(p), e != nil && e.kind == kindDir:
		return nil, pathError("read", p, syscall.EISDIR)
	case e == nil:
		return nil, pathError("open", p, syscall.ENOENT)
	default:
		return slices.Clone(e.data), nil
	}
}

// writeFile writes data to p, creating it, and appends or truncates.
func (f *rootfs) writeFile(p string, data []byte, appendTo bool) error {
	p = f.abs(p)
	if m, rel := f.mountFor(p); m != nil {
		err := onHost(m, rel, true, func(root *os.Root, name string) error {
			flags := os.O_WRONLY | os.O_CREATE | syscall.O_NONBLOCK | os.O_TRUNC
			if appendTo {
				flags = os.O_WRONLY | os.O_CREATE | syscall.O_NONBLOCK | os.O_APPEND
			}
			file, err := root.OpenFile(name, flags, 0o644)
			if err != nil {
				return err
			}
			_, err = file.Write(data)
			return errors.Join(err, file.Close())
		})
		if err != nil {
			return pathError("write", p, err)
		}
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.layer[p]
	switch {
	case e != nil && e.kind == kindNull:
		return nil
	case e != nil && e.kind == kindDir, e == nil && f.holdsMount(p):
		return pathError("write", p, syscall.EISDIR)
	case e == nil:
		if err := f.parentLocked(p); err != nil {
			return pathError("write", p, err)
		}
		e = &layerFile{kind: kindFile}
	}
	keep := len(e.data) // what stays of the old content
	if !appendTo {
		keep = 0
	}
	grow := keep + len(data) - len(e.data)
	if f.size+grow > maxLayerBytes {
		return pathError("write", p, syscall.ENOSPC)
	}
	f.size += grow
	e.data = append(e.data[:keep:keep], data...)
	f.layer[p] = e
	return nil
}

// parentLocked checks that p's directory exists in the layer (or holds a mount).
func (f *rootfs) parentLocked(p string) error {
	switch e := f.layer[path.Dir(p)]; {
	case e != nil && e.kind == kindDir, e == nil && f.holdsMount(path.Dir(p)):
		return nil
	case e != nil:
		return syscall.ENOTDIR
	default:
		return syscall.ENOENT
	}
}

// touch creates p empty if it does not exist.
func (f *rootfs) touch(p string) error {
	if _, err := f.stat(p); err == nil {
		if m, _ := f.mountFor(f.abs(p)); m != nil && m.GetReadonly() {
			return pathError("touch", f.abs(p), syscall.EROFS) // touch updates the times
		}
		return nil
	}
	return f.writeFile(p, nil, true)
}

// remove removes a file, or with recursive a directory and everything below it.
func (f *rootfs) remove(p string, recursive bool) error {
	p = f.abs(p)
	if f.holdsMount(p) {
		return pathError("remove", p, syscall.EBUSY)
	}
	if m, rel := f.mountFor(p); m != nil {
		err := onHost(m, rel, true, func(root *os.Root, name string) error {
			fi, err := root.Lstat(name)
			switch {
			case err != nil:
				return err
			case fi.IsDir() && !recursive:
				return syscall.EISDIR
			case fi.IsDir():
				return root.RemoveAll(name)
			}
			return root.Remove(name)
		})
		if err != nil {
			return pathError("remove", p, err)
		}
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch e := f.layer[p]; {
	case e == nil:
		return pathError("remove", p, syscall.ENOENT)
	case e.kind == kindDir && !recursive:
		return pathError("remove", p, syscall.EISDIR)
	}
	for q, e := range f.layer {
		if q == p || strings.HasPrefix(q, p+"/") {
			f.size -= len(e.data)
			delete(f.layer, q)
		}
	}
	return nil
}

// mkdir makes directory p; with parents, also its missing parents, and an existing directory
// is fine.
func (f *rootfs) mkdir(p string, parents bool) error {
	p = f.abs(p)
	if m, rel := f.mountFor(p); m != nil {
		err := onHost(m, rel, true, func(root *os.Root, name string) error {
			if parents {
				return root.MkdirAll(name, 0o755)
			}
			return root.Mkdir(name, 0o755)
		})
		if err != nil {
			return pathError("mkdir", p, err)
		}
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.layer[p]; e != nil || f.holdsMount(p) {
		if parents && (e == nil || e.kind == kindDir) {
			return nil
		}
		return pathError("mkdir", p, syscall.EEXIST)
	}
	if err := f.mkdirLocked(p, parents); err != nil {
		return pathError("mkdir", p, err)
	}
	return nil
}

// mkdirLocked makes layer directory p, which does not exist; with parents, also its parents.
func (f *rootfs) mkdirLocked(p string, parents bool) error {
	if d := path.Dir(p); parents && f.layer[d] == nil && !f.holdsMount(d) {
		if err := f.mkdirLocked(d, true); err != nil {
			return err
		}
	}
	if err := f.parentLocked(p); err != nil {
		return err
	}
	f.layer[p] = &layerFile{kind: kindDir}
	return nil
}

// symlink makes link a symbolic link to target, which is kept as written (a container's "/"
// means its own root, so the fake's filesystem never follows a link out of its mount). Only in a
// mounted volume: the in-memory layer holds no links ("Operation not permitted").
func (f *rootfs) symlink(target, link string) error {
	p := f.abs(link)
	m, rel := f.mountFor(p)
	switch {
	case m == nil:
		return pathError("symlink", p, syscall.EPERM)
	case rel == ".":
		return pathError("symlink", p, syscall.EEXIST)
	}
	err := onHost(m, rel, true, func(root *os.Root, name string) error {
		return root.Symlink(target, name)
	})
	if err != nil {
		return pathError("symlink", p, err)
	}
	return nil
}

// readDir names the entries of directory p, sorted: its content and the mount points just
// below it. The atomic writer's internals ("..data", "..2024_…") stay hidden, as ls hides them.
func (f *rootfs) readDir(p string) ([]string, error) {
	p = f.abs(p)
	kind, err := f.stat(p)
	if err != nil {
		return nil, err
	}
	if kind != kindDir {
		return nil, pathError("open", p, syscall.ENOTDIR)
	}
	set := map[string]bool{}
	if m, rel := f.mountFor(p); m != nil {
		err := onHost(m, rel, false, func(root *os.Root, name string) error {
			dir, err := root.Open(name)
			if err != nil {
				return err
			}
			defer dir.Close()
			names, err := dir.Readdirnames(-1)
			for _, n := range names {
				set[n] = !strings.HasPrefix(n, "..")
			}
			return err
		})
		if err != nil {
			return nil, pathError("open", p, err)
		}
	} else {
		f.mu.Lock()
		for q := range f.layer {
			if path.Dir(q) == p && q != "/" {
				set[path.Base(q)] = true
			}
		}
		f.mu.Unlock()
	}
	for _, m := range f.mounts {
		cp := path.Clean("/" + m.GetContainerPath())
		if rest, ok := strings.CutPrefix(cp, strings.TrimSuffix(p, "/")+"/"); ok {
			set[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	maps.DeleteFunc(set, func(_ string, show bool) bool { return !show })
	return slices.Sorted(maps.Keys(set)), nil
}

// usage is what the in-memory layer holds, as a writable layer's usage: the files' content plus
// a 4 KiB block per entry, and the number of entries (inodes).
func (f *rootfs) usage() (bytes, inodes uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return uint64(f.size) + 4096*uint64(len(f.layer)), uint64(len(f.layer))
}

package fake

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// view is what an inspection command may see of a container: its environment, its hostname and
// the host directories the kubelet mounted into it. Nothing else of the host is reachable.
type view struct {
	env      []*runtimeapi.KeyValue
	hostname string
	mounts   []*runtimeapi.Mount
}

// inspect runs one of the inspection commands of the grammar (env, hostname, cat, ls) against a
// container's view and returns what it prints and its exit code, as busybox would.
func inspect(v view, name string, args []string) (stdout, stderr string, code int32) {
	switch name {
	case "env", "printenv":
		var b strings.Builder
		for _, kv := range v.env {
			if len(args) == 0 || args[0] == kv.GetKey() {
				if len(args) == 0 {
					fmt.Fprintf(&b, "%s=", kv.GetKey())
				}
				fmt.Fprintf(&b, "%s\n", kv.GetValue())
			}
		}
		return b.String(), "", 0
	case "hostname":
		return v.hostname + "\n", "", 0
	case "cat":
		var out, errs strings.Builder
		for _, p := range args {
			host, ok := v.resolve(p)
			data, err := readRegularFile(host)
			if !ok || err != nil {
				fmt.Fprintf(&errs, "cat: can't open '%s': No such file or directory\n", p)
				code = 1
				continue
			}
			out.Write(data)
		}
		return out.String(), errs.String(), code
	case "ls":
		dir := "/"
		if len(args) > 0 {
			dir = args[len(args)-1]
		}
		names, ok := v.list(dir)
		if !ok {
			return "", fmt.Sprintf("ls: %s: No such file or directory\n", dir), 1
		}
		return strings.Join(names, "\n") + "\n", "", 0
	}
	return "", fmt.Sprintf("sh: %s: not found\n", name), 127
}

// maxCatBytes bounds what cat reads from a mount: enough for any Secret or ConfigMap (1 MiB).
const maxCatBytes = 1 << 20

// readRegularFile reads at most maxCatBytes of a regular file (never a FIFO or device, which
// could block or never end).
func readRegularFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a readable regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, maxCatBytes))
}

// resolve maps a path inside the container to a host path through the mounts (the longest
// matching container path wins). Paths that climb out of a mount resolve to nothing.
func (v view) resolve(p string) (string, bool) {
	p = path.Clean("/" + p)
	best, bestLen := -1, -1
	for i, m := range v.mounts {
		cp := path.Clean("/" + m.GetContainerPath())
		if (p == cp || strings.HasPrefix(p, strings.TrimSuffix(cp, "/")+"/")) && len(cp) > bestLen {
			best, bestLen = i, len(cp)
		}
	}
	if best < 0 {
		return "", false
	}
	m := v.mounts[best]
	rel := strings.TrimPrefix(p, path.Clean("/"+m.GetContainerPath()))
	return filepath.Join(m.GetHostPath(), filepath.FromSlash(rel)), true
}

// list names the entries of a directory inside the container: a mounted directory's content, plus
// the mount points below it.
func (v view) list(dir string) ([]string, bool) {
	dir = path.Clean("/" + dir)
	set := map[string]bool{}
	found := false
	if host, ok := v.resolve(dir); ok {
		if entries, err := os.ReadDir(host); err == nil {
			found = true
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "..") { // the atomic writer's internals stay hidden, as ls hides them
					set[e.Name()] = true
				}
			}
		}
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for _, m := range v.mounts {
		cp := path.Clean("/" + m.GetContainerPath())
		if rest, ok := strings.CutPrefix(cp, prefix); ok && rest != "" {
			found = true
			set[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	return slices.Sorted(maps.Keys(set)), found || dir == "/"
}

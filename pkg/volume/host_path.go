package volume

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// setUpHostPath checks (or creates) a hostPath volume's path as its type asks, and returns it:
// the container gets that node path bind-mounted, nothing is copied (upstream
// pkg/volume/hostpath/host_path.go checkType). The types:
//
//	""                 no check (the path may not even exist; the runtime then fails)
//	DirectoryOrCreate  made (0755, with its parents) if missing, else must be a directory
//	Directory          must be a directory
//	FileOrCreate       made empty (0644) if missing, else must be a regular file
//	File               must be a regular file
//	Socket, CharDevice, BlockDevice   must be one
//
// A check that fails is the volume's error, in upstream's words ("hostPath type check failed:
// /x is not a directory"), so the pod's FailedMount Event reads the same.
//
// Before any check, a path with a ".." element is refused ("invalid HostPath `/a/../b`: must
// not contain '..'", upstream's SetUp with validation.ValidatePathNoBacksteps), whatever its type.
func setUpHostPath(hp *corev1.HostPathVolumeSource) (string, error) {
	path := hp.Path
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return "", fmt.Errorf("invalid HostPath `%s`: must not contain '..'", path)
	}
	if hp.Type == nil || *hp.Type == corev1.HostPathUnset {
		return path, nil
	}
	fi, statErr := os.Stat(path)
	exists := statErr == nil
	mode := os.FileMode(0)
	if exists {
		mode = fi.Mode()
	}
	fail := func(what string) (string, error) {
		return "", fmt.Errorf("hostPath type check failed: %s is not %s", path, what)
	}
	switch *hp.Type {
	case corev1.HostPathDirectoryOrCreate:
		if !exists {
			return path, os.MkdirAll(path, 0o755)
		}
		fallthrough
	case corev1.HostPathDirectory:
		if !mode.IsDir() {
			return fail("a directory")
		}
	case corev1.HostPathFileOrCreate:
		if !exists {
			f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
			if err != nil {
				return "", err
			}
			return path, f.Close()
		}
		fallthrough
	case corev1.HostPathFile:
		if !mode.IsRegular() {
			return fail("a file")
		}
	case corev1.HostPathSocket:
		if mode&os.ModeSocket == 0 {
			return fail("a socket file")
		}
	case corev1.HostPathCharDev:
		if mode&os.ModeCharDevice == 0 {
			return fail("a character device")
		}
	case corev1.HostPathBlockDev:
		if mode&os.ModeDevice == 0 || mode&os.ModeCharDevice != 0 {
			return fail("a block device")
		}
	default:
		return "", fmt.Errorf("%s is an invalid volume type", *hp.Type)
	}
	return path, nil
}

package cm

// Removing the cgroups of pods that are gone (upstream: pkg/kubelet/kubelet_pods.go
// cleanupOrphanedPodCgroups, pod_container_manager_linux.go GetAllPodsFromCgroups and Destroy).

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
)

// qosCgroups are the cgroups, below a hierarchy's root, that hold pod cgroups.
var qosCgroups = []string{kubepodsCgroup, kubepodsCgroup + "/burstable", kubepodsCgroup + "/besteffort"}

// RemoveOrphanedPodCgroups removes the pod<uid> cgroups of pods not in keep from every
// hierarchy under root (/sys/fs/cgroup: the unified one on cgroup v2, one per controller on v1),
// with the empty container cgroups left inside them. The runtime made them (runc creates the
// parents of a container's cgroup) but removes only the containers' own. A cgroup that still
// has a process or a child is left for a later turn: the kernel refuses to remove it, so a pod
// that still runs keeps its cgroup. It returns how many pod cgroups it removed.
func RemoveOrphanedPodCgroups(root string, keep map[types.UID]bool) (int, error) {
	hierarchies := []string{root}
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if e.IsDir() {
			hierarchies = append(hierarchies, filepath.Join(root, e.Name()))
		}
	}
	removed := 0
	var errs []error
	for _, h := range hierarchies {
		for _, qos := range qosCgroups {
			pods, err := os.ReadDir(filepath.Join(h, qos))
			if err != nil {
				continue // this hierarchy has no pods of ours
			}
			for _, p := range pods {
				uid, ok := strings.CutPrefix(p.Name(), "pod")
				if !p.IsDir() || !ok || keep[types.UID(uid)] {
					continue
				}
				done, err := removeCgroup(filepath.Join(h, qos, p.Name()))
				if done {
					removed++
				}
				errs = append(errs, err)
			}
		}
	}
	return removed, errors.Join(errs...)
}

// removeCgroup removes dir's child cgroups, then dir. A cgroup in use (EBUSY), or one already
// gone, is not an error.
func removeCgroup(dir string) (bool, error) {
	children, err := os.ReadDir(dir)
	if err != nil {
		return false, ignoreBusy(err)
	}
	for _, c := range children {
		if c.IsDir() {
			if err := os.Remove(filepath.Join(dir, c.Name())); ignoreBusy(err) != nil {
				return false, err
			}
		}
	}
	if err := os.Remove(dir); err != nil {
		return false, ignoreBusy(err)
	}
	return true, nil
}

func ignoreBusy(err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.EBUSY) || errors.Is(err, unix.ENOTEMPTY) {
		return nil
	}
	return err
}

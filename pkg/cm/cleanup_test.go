package cm

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// Upstream cleanupOrphanedPodCgroups: the pod cgroups of pods no longer wanted are removed from
// every hierarchy, with their (empty) container cgroups; those of kept pods and anything not
// named pod<uid> stay.
func TestRemoveOrphanedPodCgroups(t *testing.T) {
	root := t.TempDir()
	dirs := []string{
		"memory/kubepods/burstable/podgone1/c1", // a container cgroup runc left
		"cpu/kubepods/besteffort/podgone2",
		"memory/kubepods/podkept",
		"memory/kubepods/burstable/not-a-pod",
		"kubepods/besteffort/podgone3", // cgroup v2: the unified hierarchy is the root itself
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveOrphanedPodCgroups(root, map[types.UID]bool{"kept": true})
	if err != nil || removed != 3 {
		t.Fatalf("RemoveOrphanedPodCgroups = %d, %v; want 3 removed", removed, err)
	}
	for d, want := range map[string]bool{
		"memory/kubepods/burstable/podgone1": false, "cpu/kubepods/besteffort/podgone2": false, "kubepods/besteffort/podgone3": false,
		"memory/kubepods/podkept": true, "memory/kubepods/burstable/not-a-pod": true,
	} {
		if _, err := os.Stat(filepath.Join(root, d)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", d, err == nil, want)
		}
	}
}

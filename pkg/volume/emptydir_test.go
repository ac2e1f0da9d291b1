package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// fakeMounter records tmpfs mounts instead of making them: a directory it "mounted" is a mount
// point until it is unmounted.
type fakeMounter struct {
	mounted map[string]int64 // dir → size
	calls   []string
}

func (m *fakeMounter) MountTmpfs(dir string, size int64) error {
	m.mounted[dir] = size
	m.calls = append(m.calls, "mount "+filepath.Base(dir))
	return nil
}

func (m *fakeMounter) Unmount(dir string) error {
	delete(m.mounted, dir)
	m.calls = append(m.calls, "unmount "+filepath.Base(dir))
	return nil
}

func (m *fakeMounter) IsMountPoint(dir string) (bool, error) {
	if _, err := os.Stat(dir); err != nil {
		return false, err
	}
	_, ok := m.mounted[dir]
	return ok, nil
}

func memoryVolume(name string, sizeLimit string) *corev1.Volume {
	v := &corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}
	if sizeLimit != "" {
		v.EmptyDir.SizeLimit = ptrQuantity(sizeLimit)
	}
	return v
}

func ptrQuantity(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

// With a Mounter (a real runtime), medium Memory is a tmpfs on the volume's directory, mounted
// once however often the volume is set up, and unmounted before the directory goes — at teardown
// and when a restarted kubelet cleans the pod up (upstream emptyDir SetUpAt / TearDownAt).
func TestEmptyDirMemoryIsTmpfs(t *testing.T) {
	p, root := newProjector(t, &apiObjects{})
	m := &fakeMounter{mounted: map[string]int64{}}
	p.cfg.Mounter = m
	p.cfg.NodeAllocatable = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}
	pod := testPod()
	ctx := context.Background()
	dir, err := p.SetUpVolume(ctx, pod, memoryVolume("shm", "64Mi"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "pods", string(pod.UID), "volumes", EmptyDirPluginDir, "shm"); dir != want || m.mounted[dir] != 64<<20 {
		t.Fatalf("set up at %s with mounts %v, want a 64Mi tmpfs at %s", dir, m.mounted, want)
	}
	if _, err := p.SetUpVolume(ctx, pod, memoryVolume("shm", "64Mi")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetUpVolume(ctx, pod, memoryVolume("left", "")); err != nil {
		t.Fatal(err)
	}
	if err := p.TearDownVolume(pod.UID, memoryVolume("shm", "64Mi")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after teardown %s: %v, want it removed", dir, err)
	}
	if err := p.CleanupPod(pod.UID); err != nil { // "left" is still mounted: unmounted first
		t.Fatal(err)
	}
	if got := strings.Join(m.calls, ", "); got != "mount shm, mount left, unmount shm, unmount left" {
		t.Errorf("mounter calls: %s", got)
	}
}

// Without a Mounter (the fake runtime, which never touches host mounts) medium Memory is a plain
// directory; a HugePages medium is refused, saying what to use instead, and an unknown one with
// upstream's error.
func TestEmptyDirMediums(t *testing.T) {
	p, _ := newProjector(t, &apiObjects{})
	pod := testPod()
	dir, err := p.SetUpVolume(context.Background(), pod, memoryVolume("shm", "1Mi"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o777 {
		t.Errorf("medium Memory on the fake runtime: %v %v, want a 0777 directory", fi, err)
	}
	for medium, want := range map[corev1.StorageMedium]string{
		corev1.StorageMediumHugePages:               `emptyDir medium "HugePages" is not supported by minikubelet: it does not manage hugepages`,
		corev1.StorageMediumHugePagesPrefix + "2Mi": `emptyDir medium "HugePages-2Mi" is not supported by minikubelet`,
		"Disk": `unknown storage medium "Disk"`,
	} {
		v := &corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}}
		if _, err := p.SetUpVolume(context.Background(), pod, v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("medium %s: %v, want %q", medium, err, want)
		}
	}
}

// The tmpfs size is upstream's calculateEmptyDirMemorySize: node allocatable memory, or the pod's
// memory limit (only when every container limits memory), or the volume's sizeLimit, whichever
// is smallest.
func TestEmptyDirMemorySize(t *testing.T) {
	limited := func(limits ...string) *corev1.Pod {
		pod := &corev1.Pod{}
		for _, l := range limits {
			c := corev1.Container{}
			if l != "" {
				c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(l)}
			}
			pod.Spec.Containers = append(pod.Spec.Containers, c)
		}
		return pod
	}
	alloc := resource.MustParse("4Gi")
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		sizeLimit string
		want      string
	}{
		{"no limits: node allocatable", limited(""), "", "4Gi"},
		{"pod limit", limited("256Mi", "256Mi"), "", "512Mi"},
		{"one container without a limit: node allocatable", limited("256Mi", ""), "", "4Gi"},
		{"sizeLimit below the pod limit", limited("256Mi"), "64Mi", "64Mi"},
		{"sizeLimit above the pod limit", limited("256Mi"), "1Gi", "256Mi"},
		{"sizeLimit above node allocatable", limited(""), "8Gi", "4Gi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EmptyDirMemorySize(&alloc, memoryVolume("v", tc.sizeLimit), tc.pod)
			if want := resource.MustParse(tc.want); got.Cmp(want) != 0 {
				t.Errorf("size %s, want %s", got.String(), tc.want)
			}
		})
	}
}

var _ Mounter = (*fakeMounter)(nil)

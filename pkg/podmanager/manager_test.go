package podmanager

import (
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/minikubelet/minikubelet/pkg/podsource"
)

func pod(ns, name, uid string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Annotations: annotations}}
}

func staticPod(ns, name, hash string) *corev1.Pod {
	return pod(ns, name, hash, map[string]string{podsource.ConfigSourceAnnotationKey: podsource.FileSource, podsource.ConfigHashAnnotationKey: hash})
}

func mirrorPod(ns, name, uid, hash string) *corev1.Pod {
	return pod(ns, name, uid, map[string]string{
		podsource.ConfigSourceAnnotationKey: podsource.ApiserverSource, podsource.ConfigHashAnnotationKey: hash, podsource.ConfigMirrorAnnotationKey: hash,
	})
}

func newManager(t *testing.T) *Manager {
	t.Helper()
	m, err := New(Config{Client: fake.NewClientset(), NodeName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func podUIDs(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, string(p.UID))
	}
	slices.Sort(out)
	return out
}

// orphanNames is "namespace/name" of each mirror pod GetOrphanedMirrorPods returns, in its order.
func orphanNames(m *Manager) []string {
	out := []string{}
	for _, p := range m.GetOrphanedMirrorPods() {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// Pins upstream basicManager: mirror pods arrive as ordinary pods from the apiserver source and
// are sorted into the mirror maps by their config.mirror annotation; GetPods and the lookups by
// UID and name see regular and static pods only; a mirror finds its static pod by name and back.
func TestManagerSortsMirrorPods(t *testing.T) {
	m := newManager(t)
	regular := pod("default", "web", "uid-web", nil)
	static := staticPod("kube-system", "etcd-n1", "hash1")
	mirror := mirrorPod("kube-system", "etcd-n1", "uid-mirror", "hash1")
	m.SetPods([]*corev1.Pod{regular, static})
	m.AddPod(mirror)

	if got := podUIDs(m.GetPods()); !slices.Equal(got, []string{"hash1", "uid-web"}) {
		t.Errorf("GetPods = %v, want the regular and the static pod, not the mirror", got)
	}
	if _, ok := m.GetPodByUID("uid-mirror"); ok {
		t.Error("GetPodByUID found a mirror pod")
	}
	if p, ok := m.GetPodByUID("uid-web"); !ok || p != regular {
		t.Error("GetPodByUID did not find the regular pod")
	}
	for _, tc := range []struct {
		ns, name string
		want     *corev1.Pod
	}{
		{"default", "web", regular},
		{"kube-system", "etcd-n1", static}, // the static pod, not its mirror of the same name
		{"other", "web", nil},
	} {
		p, ok := m.GetPodByFullName(tc.ns, tc.name)
		if ok != (tc.want != nil) || p != tc.want {
			t.Errorf("GetPodByFullName(%s, %s) = %v, %v; want %v", tc.ns, tc.name, p, ok, tc.want)
		}
	}
	if got, ok := m.GetMirrorPodByPod(static); !ok || got != mirror {
		t.Error("GetMirrorPodByPod did not find the mirror")
	}
	if got, ok := m.GetPodByMirrorPod(mirror); !ok || got != static {
		t.Error("GetPodByMirrorPod did not find the static pod")
	}
	if _, ok := m.GetMirrorPodByPod(regular); ok {
		t.Error("a regular pod has a mirror")
	}
	if !m.IsMirrorPod(mirror) || m.IsMirrorPod(static) || m.IsMirrorPod(regular) {
		t.Error("IsMirrorPod wrong")
	}
	if names := orphanNames(m); len(names) != 0 {
		t.Errorf("orphans = %v, want none while the static pod exists", names)
	}

	// UpdatePod replaces by UID.
	updated := regular.DeepCopy()
	updated.Labels = map[string]string{"v": "2"}
	m.UpdatePod(updated)
	if p, _ := m.GetPodByFullName("default", "web"); p.Labels["v"] != "2" {
		t.Error("UpdatePod did not replace the pod")
	}
}

// Pins upstream GetPodsAndMirrorPods' orphan list: a mirror pod whose static pod is gone is an
// orphan the kubelet must delete.
func TestOrphanedMirrorPods(t *testing.T) {
	m := newManager(t)
	etcd, api := staticPod("kube-system", "etcd-n1", "h1"), staticPod("kube-system", "apiserver-n1", "h2")
	m.SetPods([]*corev1.Pod{
		etcd, api,
		mirrorPod("kube-system", "etcd-n1", "m1", "h1"),
		mirrorPod("kube-system", "apiserver-n1", "m2", "h2"),
		mirrorPod("default", "old-n1", "m3", "h0"),
	})
	if got := orphanNames(m); !slices.Equal(got, []string{"default/old-n1"}) {
		t.Errorf("orphans = %v, want [default/old-n1]", got)
	}
	m.RemovePod(etcd)
	if got := orphanNames(m); !slices.Equal(got, []string{"default/old-n1", "kube-system/etcd-n1"}) {
		t.Errorf("orphans = %v after removing etcd, want default/old-n1 and kube-system/etcd-n1", got)
	}
	if got := m.GetOrphanedMirrorPods(); len(got) != 2 || got[1].UID != "m1" {
		t.Errorf("orphan pods = %v, want the mirror m1 (with its UID for the delete precondition)", podUIDs(got))
	}
	m.RemovePod(mirrorPod("kube-system", "etcd-n1", "m1", "h1"))
	m.RemovePod(mirrorPod("default", "old-n1", "m3", "h0"))
	if got := orphanNames(m); len(got) != 0 {
		t.Errorf("orphans = %v after removing the mirrors, want none", got)
	}
}

// A static pod edited on disk arrives as REMOVE old + ADD new with the same name. Whatever the
// order, removing the old UID must not hide the new pod (upstream removes by name blindly).
func TestRemoveOldPodKeepsNewerWithSameName(t *testing.T) {
	m := newManager(t)
	old, renewed := staticPod("default", "web-n1", "h1"), staticPod("default", "web-n1", "h2")
	m.AddPod(old)
	m.AddPod(renewed)
	m.RemovePod(old)
	if p, ok := m.GetPodByFullName("default", "web-n1"); !ok || p.UID != "h2" {
		t.Errorf("GetPodByFullName = %v, %v; want the new pod h2", p, ok)
	}
	if got := podUIDs(m.GetPods()); !slices.Equal(got, []string{"h2"}) {
		t.Errorf("GetPods = %v, want [h2]", got)
	}
}

func TestManagerConcurrentUse(t *testing.T) {
	m := newManager(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p := pod("default", "p", string(rune('a'+i)), nil)
			m.AddPod(p)
			m.GetPods()
			orphanNames(m)
			m.RemovePod(p)
		})
	}
	wg.Wait()
	if n := len(m.GetPods()); n != 0 {
		t.Errorf("%d pods left, want 0", n)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{NodeName: "n1"}); err == nil {
		t.Error("accepted a config without a client")
	}
	if _, err := New(Config{Client: fake.NewClientset()}); err == nil {
		t.Error("accepted a config without a node name")
	}
}

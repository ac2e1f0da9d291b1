package podmanager

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/pkg/podsource"
)

func node() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}
}

func runnableStatic() *corev1.Pod {
	p := staticPod("kube-system", "etcd-n1", "hash1")
	p.Labels = map[string]string{"component": "etcd"}
	p.Spec = corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "etcd", Image: "etcd:3.6"}}}
	p.Status.Phase = corev1.PodRunning
	return p
}

// Pins upstream basicMirrorClient.CreateMirrorPod: the mirror carries the static pod's
// annotations plus config.mirror=<config.hash>, and an owner reference to the Node with its UID
// (controller=true), which NodeRestriction admission requires (KEP-1314).
func TestCreateMirrorPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(node())
	m, err := New(Config{Client: client, NodeName: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	static := runnableStatic()
	if err := m.CreateMirrorPod(ctx, static); err != nil {
		t.Fatal(err)
	}
	mirror, err := client.CoreV1().Pods("kube-system").Get(ctx, "etcd-n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mirror.Annotations[podsource.ConfigMirrorAnnotationKey] != "hash1" || mirror.Annotations[podsource.ConfigSourceAnnotationKey] != "file" {
		t.Errorf("annotations = %v, want config.mirror=hash1 and the static pod's own", mirror.Annotations)
	}
	if len(mirror.OwnerReferences) != 1 {
		t.Fatalf("owner references = %v, want one to the Node", mirror.OwnerReferences)
	}
	ref := mirror.OwnerReferences[0]
	if ref.APIVersion != "v1" || ref.Kind != "Node" || ref.Name != "n1" || ref.UID != "node-uid" || ref.Controller == nil || !*ref.Controller {
		t.Errorf("owner reference = %+v, want v1 Node n1 node-uid controller=true", ref)
	}
	if mirror.Labels["component"] != "etcd" || mirror.Spec.Containers[0].Image != "etcd:3.6" || mirror.UID == static.UID {
		t.Errorf("mirror = %+v: want the static pod's labels and spec, and not its UID", mirror.ObjectMeta)
	}
	if !MirrorPodMatches(static, mirror) || !m.IsMirrorPod(mirror) {
		t.Error("the created mirror does not match its static pod")
	}
	if _, ok := static.Annotations[podsource.ConfigMirrorAnnotationKey]; ok {
		t.Error("CreateMirrorPod modified the static pod")
	}

	// Creating it again is fine (AlreadyExists is not an error).
	if err := m.CreateMirrorPod(ctx, static); err != nil {
		t.Errorf("second create: %v", err)
	}
	creates := 0
	for _, a := range client.Actions() {
		if a.Matches("create", "pods") {
			creates++
		}
	}
	if creates != 2 {
		t.Errorf("%d creates recorded, want 2", creates)
	}
}

func TestCreateMirrorPodErrors(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tests := []struct {
		name    string
		objects []runtime.Object
		pod     *corev1.Pod
		wantErr string
	}{
		{"no Node to own it", nil, runnableStatic(), `get node "n1"`},
		{"a regular pod has no hash", []runtime.Object{node()}, pod("default", "web", "u", nil), "not a static pod"},
		{"a Node without UID", []runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, runnableStatic(), "no UID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewMirrorClient(fake.NewClientset(tc.objects...), "n1")
			if err := c.CreateMirrorPod(ctx, tc.pod); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Pins upstream basicMirrorClient.DeleteMirrorPod: grace period 0, the UID as a precondition
// when given, and neither a missing pod nor a UID mismatch is an error (nothing deleted).
func TestDeleteMirrorPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	mirror := mirrorPod("kube-system", "etcd-n1", "mirror-uid", "hash1")
	client := fake.NewClientset(mirror)
	// The fake clientset ignores preconditions; enforce the UID one as the API server does.
	client.PrependReactor("delete", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		del := action.(clienttesting.DeleteActionImpl)
		pre := del.GetDeleteOptions().Preconditions
		if pre == nil || pre.UID == nil {
			return false, nil, nil
		}
		obj, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), del.GetNamespace(), del.GetName())
		if err != nil {
			return false, nil, nil // let the default reactor answer NotFound
		}
		if obj.(*corev1.Pod).UID != *pre.UID {
			return true, nil, apierrors.NewConflict(corev1.Resource("pods"), del.GetName(), nil)
		}
		return false, nil, nil
	})
	c := NewMirrorClient(client, "n1")

	wrong := types.UID("someone-else")
	if deleted, err := c.DeleteMirrorPod(ctx, "kube-system", "etcd-n1", &wrong); deleted || err != nil {
		t.Errorf("UID mismatch: deleted=%v err=%v, want false, nil", deleted, err)
	}
	if _, err := client.CoreV1().Pods("kube-system").Get(ctx, "etcd-n1", metav1.GetOptions{}); err != nil {
		t.Errorf("the mirror is gone after a delete with the wrong UID: %v", err)
	}

	uid := mirror.UID
	if deleted, err := c.DeleteMirrorPod(ctx, "kube-system", "etcd-n1", &uid); !deleted || err != nil {
		t.Errorf("delete: deleted=%v err=%v, want true, nil", deleted, err)
	}
	last := client.Actions()[len(client.Actions())-1].(clienttesting.DeleteActionImpl).GetDeleteOptions()
	if last.GracePeriodSeconds == nil || *last.GracePeriodSeconds != 0 || last.Preconditions == nil || *last.Preconditions.UID != uid {
		t.Errorf("delete options = %+v, want grace 0 and precondition uid %s", last, uid)
	}

	if deleted, err := c.DeleteMirrorPod(ctx, "kube-system", "etcd-n1", nil); deleted || err != nil {
		t.Errorf("already gone: deleted=%v err=%v, want false, nil", deleted, err)
	}
	last = client.Actions()[len(client.Actions())-1].(clienttesting.DeleteActionImpl).GetDeleteOptions()
	if last.Preconditions != nil {
		t.Errorf("preconditions = %+v without a uid, want none", last.Preconditions)
	}
}

// Pins upstream IsMirrorPodOf: same namespace/name and config.mirror == the static config.hash.
func TestMirrorPodMatches(t *testing.T) {
	static := staticPod("kube-system", "etcd-n1", "h2")
	tests := []struct {
		name   string
		mirror *corev1.Pod
		want   bool
	}{
		{"current mirror", mirrorPod("kube-system", "etcd-n1", "m", "h2"), true},
		{"stale mirror of an older file", mirrorPod("kube-system", "etcd-n1", "m", "h1"), false},
		{"other name", mirrorPod("kube-system", "other-n1", "m", "h2"), false},
		{"other namespace", mirrorPod("default", "etcd-n1", "m", "h2"), false},
		{"not a mirror", pod("kube-system", "etcd-n1", "m", nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MirrorPodMatches(static, tc.mirror); got != tc.want {
				t.Errorf("MirrorPodMatches = %v, want %v", got, tc.want)
			}
		})
	}
	if MirrorPodMatches(pod("kube-system", "etcd-n1", "u", nil), mirrorPod("kube-system", "etcd-n1", "m", "")) {
		t.Error("an empty hash matched a pod without one")
	}
}

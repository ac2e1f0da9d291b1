package podsource

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// Pins upstream apiserver.go: the kubelet lists and watches pods with spec.nodeName=<node> in all
// namespaces, and every change becomes an incremental update: a new pod ADD, a status write
// RECONCILE, a graceful deletion DELETE, the final removal REMOVE.
func TestApiserverSource(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	mine := testPod("uid-mine", "mine")
	mine.Namespace = "team-a"
	other := testPod("uid-other", "other", func(p *corev1.Pod) { p.Spec.NodeName = "n2" })
	client := fake.NewClientset(mine, other)

	// The fake clientset ignores field selectors: assert we asked for one, and tell the test when
	// the watch is registered so no event falls between LIST and WATCH.
	watching := make(chan struct{})
	client.PrependWatchReactor("pods", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w := action.(clienttesting.WatchActionImpl)
		if got := w.GetWatchRestrictions().Fields.String(); got != "spec.nodeName=n1" {
			t.Errorf("watch field selector = %q, want spec.nodeName=n1", got)
		}
		if w.GetNamespace() != "" {
			t.Errorf("watching namespace %q, want all namespaces", w.GetNamespace())
		}
		watcher, err := client.Tracker().Watch(corev1.SchemeGroupVersion.WithResource("pods"), "")
		close(watching)
		return true, watcher, err
	})
	client.PrependReactor("list", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if got := action.(clienttesting.ListActionImpl).GetListRestrictions().Fields.String(); got != "spec.nodeName=n1" {
			t.Errorf("list field selector = %q, want spec.nodeName=n1", got)
		}
		return false, nil, nil
	})

	clk := testingclock.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	s, err := New(Config{Client: client, NodeName: "n1", Recorder: record.NewFakeRecorder(10), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	u := waitUpdate(t, ctx, s.Updates())
	if u.Op != ADD || u.Source != ApiserverSource || len(u.Pods) != 1 || u.Pods[0].UID != "uid-mine" {
		t.Fatalf("got %v from %s of %v, want ADD from api of uid-mine only (uid-other is on n2)", u.Op, u.Source, uids(u.Pods))
	}
	if u.Pods[0].Annotations[ConfigSourceAnnotationKey] != ApiserverSource || kubecontainer.IsStaticPod(u.Pods[0]) {
		t.Errorf("annotations = %v, want config.source=api", u.Pods[0].Annotations)
	}
	<-watching
	if !s.AllSourcesReady() {
		t.Error("not ready after the initial list")
	}

	pods := client.CoreV1().Pods("team-a")
	if _, err := pods.Create(ctx, testPod("uid-new", "new", func(p *corev1.Pod) { p.Namespace = "team-a" }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != ADD || len(u.Pods) != 1 || u.Pods[0].UID != "uid-new" {
		t.Fatalf("got %v of %v, want ADD of uid-new", u.Op, uids(u.Pods))
	}

	running := mine.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != RECONCILE || u.Pods[0].UID != "uid-mine" {
		t.Fatalf("got %v of %v, want RECONCILE of uid-mine", u.Op, uids(u.Pods))
	}

	deleting := running.DeepCopy()
	now := metav1.NewTime(clk.Now())
	deleting.DeletionTimestamp = &now
	grace := int64(30)
	deleting.DeletionGracePeriodSeconds = &grace
	if _, err := pods.Update(ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != DELETE || u.Pods[0].UID != "uid-mine" {
		t.Fatalf("got %v of %v, want DELETE of uid-mine", u.Op, uids(u.Pods))
	}

	if err := pods.Delete(ctx, "mine", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != REMOVE || u.Pods[0].UID != "uid-mine" {
		t.Fatalf("got %v of %v, want REMOVE of uid-mine", u.Op, uids(u.Pods))
	}

	// A pod bound to another node never shows up, even though the fake ignores the selector: the
	// next update after it is the ADD of a pod of ours created afterwards.
	if _, err := client.CoreV1().Pods("default").Create(ctx, testPod("uid-n2", "elsewhere", func(p *corev1.Pod) { p.Spec.NodeName = "n2" }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Create(ctx, testPod("uid-sentinel", "sentinel", func(p *corev1.Pod) { p.Namespace = "team-a" }), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != ADD || len(u.Pods) != 1 || u.Pods[0].UID != "uid-sentinel" {
		t.Fatalf("got %v of %v, want ADD of uid-sentinel only", u.Op, uids(u.Pods))
	}
	cancel()
	<-done
}

func TestNewValidates(t *testing.T) {
	rec := record.NewFakeRecorder(1)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no node name", Config{Client: fake.NewClientset(), Recorder: rec}},
		{"no recorder", Config{Client: fake.NewClientset(), NodeName: "n1"}},
		{"no source at all", Config{NodeName: "n1", Recorder: rec}},
		{"negative period", Config{NodeName: "n1", ManifestDir: "/m", Recorder: rec, FileCheckFrequency: -time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil {
				t.Error("accepted")
			}
		})
	}
	s, err := New(Config{NodeName: "n1", ManifestDir: "/m", Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if s.file.period != 20*time.Second || s.apiserver != nil || cap(s.updates) != 50 {
		t.Errorf("period %s, apiserver %v, buffer %d: want 20s default, api disabled without a client, 50", s.file.period, s.apiserver, cap(s.updates))
	}
}

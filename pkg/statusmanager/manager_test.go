package statusmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

func testPod(uid types.UID) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: uid}}
}

func newTestManager(t *testing.T, cfg Config, objects ...runtime.Object) (*Manager, *fake.Clientset, context.Context) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewClientset(objects...)
	cfg.Client = client
	if cfg.Clock == nil {
		cfg.Clock = testingclock.NewFakeClock(t0)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, client, ctx
}

// actionVerbs lists the recorded actions as "verb resource[/subresource]".
func actionVerbs(actions []clienttesting.Action) []string {
	var verbs []string
	for _, a := range actions {
		v := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			v += "/" + a.GetSubresource()
		}
		verbs = append(verbs, v)
	}
	return verbs
}

func patches(actions []clienttesting.Action) []clienttesting.PatchActionImpl {
	var out []clienttesting.PatchActionImpl
	for _, a := range actions {
		if p, ok := a.(clienttesting.PatchActionImpl); ok {
			out = append(out, p)
		}
	}
	return out
}

func getAPIPod(t *testing.T, ctx context.Context, client *fake.Clientset, name string) *corev1.Pod {
	t.Helper()
	pod, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func TestNewDefaultsAndValidation(t *testing.T) {
	m, err := New(Config{Client: fake.NewClientset()})
	if err != nil {
		t.Fatal(err)
	}
	if m.cfg.SyncPeriod != 10*time.Second || m.cfg.Clock == nil || m.cfg.PodDeletionSafety == nil {
		t.Errorf("defaults not filled: syncPeriod %s, clock %v, safety set %v", m.cfg.SyncPeriod, m.cfg.Clock, m.cfg.PodDeletionSafety != nil)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("a config without a client was accepted")
	}
	if _, err := New(Config{Client: fake.NewClientset(), SyncPeriod: -time.Second}); err == nil {
		t.Error("a negative sync period was accepted")
	}
}

// Upstream syncPod: the kubelet PATCHes pods/status only when its status differs from the API's,
// and the patch carries only the change.
func TestSyncPodPatchesOnlyOnChange(t *testing.T) {
	pod := testPod("uid-1")
	m, client, ctx := newTestManager(t, Config{}, pod)

	status := corev1.PodStatus{
		Phase:             corev1.PodPending,
		HostIP:            "10.0.0.1",
		Conditions:        []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{waiting("app")},
	}
	m.SetPodStatus(pod, status)
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, []string{"get pods", "patch pods/status"}) {
		t.Fatalf("first sync made %v, want get then patch of pods/status", got)
	}
	p := patches(client.Actions())[0]
	if p.Name != "web" || p.PatchType != types.StrategicMergePatchType {
		t.Errorf("patched %s with %s, want web with a strategic merge patch", p.Name, p.PatchType)
	}
	api := getAPIPod(t, ctx, client, "web")
	if api.Status.Phase != corev1.PodPending || api.Status.HostIP != "10.0.0.1" || api.Status.StartTime == nil {
		t.Errorf("API status = %+v, want the cached one", api.Status)
	}

	// Same status again: SetPodStatus ignores it, and a sync finds nothing to write.
	client.ClearActions()
	m.SetPodStatus(pod, status)
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, []string{"get pods"}) {
		t.Errorf("a sync of an unchanged status made %v, want only a get", got)
	}

	// A changed phase: one more PATCH, carrying only the phase and the UID precondition.
	client.ClearActions()
	status.Phase = corev1.PodRunning
	m.SetPodStatus(pod, status)
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	ps := patches(client.Actions())
	if len(ps) != 1 {
		t.Fatalf("a changed status made %v, want one patch", actionVerbs(client.Actions()))
	}
	var got map[string]any
	if err := json.Unmarshal(ps[0].Patch, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{"uid": "uid-1"}, "status": map[string]any{"phase": "Running"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patch = %s, want only the phase and the UID", ps[0].Patch)
	}
	if api := getAPIPod(t, ctx, client, "web"); api.Status.Phase != corev1.PodRunning {
		t.Errorf("API phase = %s, want Running", api.Status.Phase)
	}
}

// Upstream updateStatusInternal: lastTransitionTime of a condition whose status did not change is
// kept, even if the caller computed a new one.
func TestSetPodStatusKeepsTransitionTime(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	pod := testPod("uid-1")
	m, _, _ := newTestManager(t, Config{Clock: clk}, pod)

	m.SetPodStatus(pod, corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, time.Time{})}})
	clk.Step(time.Minute)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, clk.Now())}})
	got, ok := m.GetPodStatus(pod.UID)
	if !ok {
		t.Fatal("no cached status")
	}
	if c := got.Conditions[0]; !c.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Ready lastTransitionTime = %s, want the first %s", c.LastTransitionTime, t0)
	}
	clk.Step(time.Minute)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, time.Time{})}})
	got, _ = m.GetPodStatus(pod.UID)
	if c := got.Conditions[0]; !c.LastTransitionTime.Time.Equal(clk.Now()) {
		t.Errorf("Ready lastTransitionTime after a flip = %s, want now %s", c.LastTransitionTime, clk.Now())
	}
}

// Upstream syncPod: a pod that is gone, or was deleted and recreated under the same name (another
// UID), gets no write, and its cached status is dropped.
func TestSyncPodDropsGoneOrRecreatedPods(t *testing.T) {
	tests := []struct {
		name    string
		objects []runtime.Object
	}{
		{"not found", nil},
		{"UID mismatch", []runtime.Object{testPod("uid-new")}},
		{"forbidden (the Node authorizer, pod no longer bound here)", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, client, ctx := newTestManager(t, Config{Pods: apiPods{}}, tc.objects...)
			if strings.HasPrefix(tc.name, "forbidden") {
				client.PrependReactor("get", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "p", errors.New("no relationship found between node and this object"))
				})
			}
			m.SetPodStatus(testPod("uid-old"), corev1.PodStatus{Phase: corev1.PodRunning})
			if err := m.syncPod(ctx, "uid-old"); err != nil {
				t.Fatal(err)
			}
			if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, []string{"get pods"}) {
				t.Errorf("actions = %v, want only the get", got)
			}
			if m.Len() != 0 {
				t.Errorf("%d statuses cached, want the entry dropped", m.Len())
			}
		})
	}
}

// A 403 for a pod the kubelet still has is the node authorizer not linking it to the node yet
// (a pod bound by spec.nodeName reaches the kubelet's watch before the authorizer's graph): the
// status is kept and written once the API server caught up, with no error. A 403 that lasts
// authorizerLag is an error (wrong RBAC, say), and the status is still kept for the next try.
func TestSyncPodWaitsForTheAuthorizerOfAKnownPod(t *testing.T) {
	for _, tc := range []struct {
		name      string
		forbidden time.Duration // how long the API server answers 403
		wantErr   bool
	}{
		{"the authorizer catches up", 5 * time.Second, false},
		{"forbidden for good", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(t0)
			pod := testPod("uid-1")
			m, client, ctx := newTestManager(t, Config{Clock: clk, Pods: apiPods{pod.UID: pod}}, testPod("uid-1"))
			client.PrependReactor("get", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
				if clk.Since(t0) < tc.forbidden {
					return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "web", errors.New("no relationship found between node 'n1' and this object"))
				}
				return false, nil, nil
			})
			m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning})
			if err := m.syncPod(ctx, pod.UID); err != nil {
				t.Fatalf("first sync = %v, want no error while the API server may lag", err)
			}
			if m.Len() != 1 || !m.pending(pod.UID) {
				t.Fatalf("%d statuses cached, pending %v: want the entry kept for the next resync", m.Len(), m.pending(pod.UID))
			}
			var err error
			for clk.Since(t0) <= authorizerLag && err == nil && m.pending(pod.UID) {
				clk.Step(DefaultSyncPeriod / 2)
				err = m.syncPod(ctx, pod.UID)
			}
			if (err != nil) != tc.wantErr || err != nil && !strings.Contains(err.Error(), "no relationship found") {
				t.Fatalf("after %s: syncPod = %v, want an error: %v", clk.Since(t0), err, tc.wantErr)
			}
			if tc.wantErr {
				if m.Len() != 1 {
					t.Errorf("%d statuses cached, want the entry kept", m.Len())
				}
				return
			}
			if api := getAPIPod(t, ctx, client, "web"); api.Status.Phase != corev1.PodRunning {
				t.Errorf("API phase = %s, want Running written once the authorizer caught up", api.Status.Phase)
			}
		})
	}
}

// A pod deleted between the GET and the PATCH has left the authorizer's graph, so the PATCH is
// forbidden; once the kubelet's watch no longer has the pod, its status is dropped, no error.
func TestSyncPodDropsAPodDeletedBeforeItsPatch(t *testing.T) {
	pod := testPod("uid-1")
	m, client, ctx := newTestManager(t, Config{Pods: apiPods{}}, testPod("uid-1"))
	client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "web", errors.New("no relationship found between node 'n1' and this object"))
	})
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning})
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatalf("syncPod = %v, want no error for a pod that is gone", err)
	}
	if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, []string{"get pods", "patch pods/status"}) {
		t.Errorf("actions = %v, want the get and the refused patch", got)
	}
	if m.Len() != 0 {
		t.Errorf("%d statuses cached, want the entry dropped", m.Len())
	}
}

// What a 403 for a pod's status means: gone if the kubelet no longer has the pod, the
// authorizer's lag for authorizerLag, then an error.
func TestJudgeForbidden(t *testing.T) {
	for _, tc := range []struct {
		known bool
		after time.Duration
		want  forbiddenVerdict
	}{
		{false, 0, podGone},
		{false, time.Hour, podGone},
		{true, 0, notLinkedYet},
		{true, authorizerLag - time.Millisecond, notLinkedYet},
		{true, authorizerLag, stillForbidden},
	} {
		if got := judgeForbidden(tc.known, t0, t0.Add(tc.after)); got != tc.want {
			t.Errorf("judgeForbidden(known %v, after %s) = %d, want %d", tc.known, tc.after, got, tc.want)
		}
	}
}

// Upstream syncPod/canBeDeleted: once a pod being deleted has no running container, the kubelet
// deletes it with grace period 0 and a UID precondition; that is what lets `kubectl delete pod`
// return. While a container runs, the pod stays.
func TestSyncPodFinishesDeletion(t *testing.T) {
	tests := []struct {
		name       string
		deleting   bool
		containers []corev1.ContainerStatus
		safety     func(*corev1.Pod, corev1.PodStatus) bool
		wantDelete bool
	}{
		{"deleting, all terminated", true, []corev1.ContainerStatus{terminated("a", 0), terminated("b", 137)}, nil, true},
		{"deleting, one running", true, []corev1.ContainerStatus{terminated("a", 0), running("b", "fake://b", false)}, nil, false},
		{"not deleting", false, []corev1.ContainerStatus{terminated("a", 0)}, nil, false},
		{"deleting, resources not reclaimed", true, []corev1.ContainerStatus{terminated("a", 0)}, func(*corev1.Pod, corev1.PodStatus) bool { return false }, false},
		// The worker stopped the pod after this status was cached: its terminal status is not in
		// the API yet, so the object stays until the next sync writes it (upstream canBeDeleted).
		{"deleting, reclaimed, phase not terminal yet", true, []corev1.ContainerStatus{terminated("a", 0)}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("uid-1")
			if tc.deleting {
				pod.DeletionTimestamp = &metav1.Time{Time: t0}
				pod.DeletionGracePeriodSeconds = ptr.To[int64](30)
			}
			m, client, ctx := newTestManager(t, Config{PodDeletionSafety: tc.safety}, pod)
			phase := corev1.PodFailed
			if strings.HasSuffix(tc.name, "phase not terminal yet") {
				phase = corev1.PodRunning
			}
			m.SetPodStatus(pod, corev1.PodStatus{Phase: phase, ContainerStatuses: tc.containers})
			if err := m.syncPod(ctx, pod.UID); err != nil {
				t.Fatal(err)
			}
			var deletes []clienttesting.DeleteActionImpl
			for _, a := range client.Actions() {
				if d, ok := a.(clienttesting.DeleteActionImpl); ok {
					deletes = append(deletes, d)
				}
			}
			if !tc.wantDelete {
				if len(deletes) != 0 {
					t.Errorf("actions = %v, want no delete", actionVerbs(client.Actions()))
				}
				if m.Len() != 1 {
					t.Errorf("%d statuses cached, want the entry kept", m.Len())
				}
				return
			}
			if len(deletes) != 1 {
				t.Fatalf("actions = %v, want one delete", actionVerbs(client.Actions()))
			}
			d := deletes[0]
			opts := d.DeleteOptions
			if d.Name != "web" || opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
				t.Errorf("deleted %s with grace %v, want web with grace 0", d.Name, opts.GracePeriodSeconds)
			}
			if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "uid-1" {
				t.Errorf("preconditions = %+v, want UID uid-1", opts.Preconditions)
			}
			if m.Len() != 0 {
				t.Errorf("%d statuses cached after the delete, want 0", m.Len())
			}
		})
	}
}

// A pod being deleted stays pending after a sync that could not delete it, so the resync checks
// again once its containers stopped.
func TestSyncAllRechecksDeletion(t *testing.T) {
	pod := testPod("uid-1")
	pod.DeletionTimestamp = &metav1.Time{Time: t0}
	m, client, ctx := newTestManager(t, Config{}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", "fake://a", false)}})
	m.syncAll(ctx)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("a", 0)}})
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	want := []string{"get pods", "patch pods/status", "get pods", "patch pods/status", "delete pods"}
	if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, want) {
		t.Errorf("actions = %v, want %v", got, want)
	}
}

// The resync sends only what is pending, and retries a failed write.
func TestSyncAllRetriesFailedWrites(t *testing.T) {
	a, b := testPod("uid-a"), testPod("uid-b")
	b.Name = "db"
	m, client, ctx := newTestManager(t, Config{}, a, b)
	m.SetPodStatus(a, corev1.PodStatus{Phase: corev1.PodRunning})
	if err := m.syncPod(ctx, a.UID); err != nil {
		t.Fatal(err)
	}

	client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("apiserver is down")
	})
	m.SetPodStatus(b, corev1.PodStatus{Phase: corev1.PodRunning})
	if err := m.syncPod(ctx, b.UID); err == nil {
		t.Fatal("a failed patch was not reported")
	}
	client.ReactionChain = client.ReactionChain[1:]
	client.ClearActions()

	m.syncAll(ctx)
	ps := patches(client.Actions())
	if len(ps) != 1 || ps[0].Name != "db" {
		t.Errorf("resync made %v, want one patch of db only", actionVerbs(client.Actions()))
	}
	if api := getAPIPod(t, ctx, client, "db"); api.Status.Phase != corev1.PodRunning {
		t.Errorf("db phase = %s, want Running after the retry", api.Status.Phase)
	}
}

// apiPods is the kubelet's copy of the API pods (podmanager in the kubelet), for Config.Pods.
type apiPods map[types.UID]*corev1.Pod

func (a apiPods) GetPodByUID(uid types.UID) (*corev1.Pod, bool) {
	pod, ok := a[uid]
	return pod, ok
}

// Upstream needsReconcile: when someone else changes a status the kubelet already wrote — kcm
// marks the pods of a node it thinks is gone not Ready — the resync writes it back, once the
// kubelet's copy of the pod shows the change; while the copy agrees, the resync sends nothing.
func TestSyncAllReconcilesStatusChangedByOthers(t *testing.T) {
	pod := testPod("uid-1")
	seen := apiPods{}
	m, client, ctx := newTestManager(t, Config{Pods: seen}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{
		Phase:             corev1.PodRunning,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{running("a", "fake://a", true)},
	})
	m.syncAll(ctx)
	seen[pod.UID] = getAPIPod(t, ctx, client, "web") // the watch delivers what the kubelet wrote
	client.ClearActions()
	m.syncAll(ctx)
	if got := actionVerbs(client.Actions()); len(got) != 0 {
		t.Fatalf("resync with nothing to do made %v, want nothing", got)
	}

	notReady := getAPIPod(t, ctx, client, "web")
	notReady.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "NodeNotReady"}}
	if _, err := client.CoreV1().Pods("default").UpdateStatus(ctx, notReady, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen[pod.UID] = notReady
	client.ClearActions()
	m.syncAll(ctx)
	if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, []string{"get pods", "patch pods/status"}) {
		t.Fatalf("resync after kcm's change made %v, want get then patch of pods/status", got)
	}
	if c := findCondition(getAPIPod(t, ctx, client, "web").Status.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %+v after the resync, want True", c)
	}
}

// Upstream SetContainerReadiness: a probe result flips the container's ready flag, and Ready and
// ContainersReady follow (True only when every container is ready).
func TestSetContainerReadiness(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	pod := testPod("uid-1")
	pod.Spec.Containers = []corev1.Container{{Name: "a"}, {Name: "b"}}
	m, _, _ := newTestManager(t, Config{Clock: clk}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", "fake://a", false), running("b", "fake://b", false)}})

	conditions := func() (containersReady, ready corev1.ConditionStatus) {
		s, _ := m.GetPodStatus(pod.UID)
		if c := findCondition(s.Conditions, corev1.ContainersReady); c != nil {
			containersReady = c.Status
		}
		if c := findCondition(s.Conditions, corev1.PodReady); c != nil {
			ready = c.Status
		}
		return containersReady, ready
	}
	steps := []struct {
		container string
		ready     bool
		want      corev1.ConditionStatus
		version   uint64
	}{
		{"fake://a", true, corev1.ConditionFalse, 2},
		{"fake://b", true, corev1.ConditionTrue, 3},
		{"fake://b", true, corev1.ConditionTrue, 3}, // unchanged: no new version
		{"fake://unknown", false, corev1.ConditionTrue, 3},
		{"fake://a", false, corev1.ConditionFalse, 4},
	}
	for i, s := range steps {
		clk.Step(time.Second)
		m.SetContainerReadiness(pod.UID, s.container, s.ready)
		cr, r := conditions()
		if cr != s.want || r != s.want {
			t.Errorf("step %d: ContainersReady %s Ready %s, want both %s", i, cr, r, s.want)
		}
		if v := m.statuses[pod.UID].version; v != s.version {
			t.Errorf("step %d: version %d, want %d", i, v, s.version)
		}
	}
	m.SetContainerReadiness("no-such-pod", "fake://a", true)
	if m.Len() != 1 {
		t.Errorf("readiness of an unknown pod created an entry")
	}
}

// Upstream SetContainerStartup: the startup probe's success sets the container's started flag,
// init containers (sidecars) included; the same value again makes no new version.
func TestSetContainerStartup(t *testing.T) {
	pod := testPod("uid-1")
	m, _, _ := newTestManager(t, Config{}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{running("side", "fake://s", false)},
		ContainerStatuses:     []corev1.ContainerStatus{running("a", "fake://a", false)}})
	m.SetContainerStartup(pod.UID, "fake://s", true)
	got, _ := m.GetPodStatus(pod.UID)
	if s := got.InitContainerStatuses[0].Started; s == nil || !*s {
		t.Errorf("sidecar started = %v, want true", s)
	}
	if v := m.statuses[pod.UID].version; v != 2 {
		t.Errorf("version = %d, want 2", v)
	}
	m.SetContainerStartup(pod.UID, "fake://s", true)
	if v := m.statuses[pod.UID].version; v != 2 {
		t.Errorf("unchanged startup made version %d", v)
	}
}

func TestRemoveOrphanedStatuses(t *testing.T) {
	m, _, _ := newTestManager(t, Config{})
	for _, uid := range []types.UID{"a", "b", "c"} {
		m.SetPodStatus(testPod(uid), corev1.PodStatus{Phase: corev1.PodRunning})
	}
	m.RemoveOrphanedStatuses(map[types.UID]bool{"b": true})
	if m.Len() != 1 {
		t.Errorf("%d statuses cached, want 1", m.Len())
	}
	if _, ok := m.GetPodStatus("b"); !ok {
		t.Error("the status of a known pod was removed")
	}
}

// Upstream SetPodStatus never blocks and coalesces: many updates before the loop runs are sent as
// one PATCH of the last status, not one per update.
func TestRunCoalesces(t *testing.T) {
	pod := testPod("uid-1")
	m, client, ctx := newTestManager(t, Config{}, pod)
	patched := make(chan struct{}, 100)
	client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		patched <- struct{}{}
		return false, nil, nil // fall through to the object tracker
	})

	const updates = 50
	for i := range updates {
		m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, Message: fmt.Sprintf("update %d", i)})
	}
	last, _ := m.GetPodStatus(pod.UID)

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { m.Run(ctx) })
	<-patched // the first PATCH carries the newest version; the rest of the queue is a no-op
	cancel()
	wg.Wait()

	if n := len(patches(client.Actions())); n == 0 || n > 2 {
		t.Errorf("%d updates made %d patches, want 1 (at most a few)", updates, n)
	}
	if api := getAPIPod(t, ctx, client, "web"); api.Status.Message != last.Message {
		t.Errorf("API message = %q, want the last one set %q", api.Status.Message, last.Message)
	}
}

// One turn per queued UID: fifty queued updates of one pod cost one GET and one PATCH (the
// first turn sends the newest version, the other turns find nothing pending and make no call).
// A resync tick with nothing pending makes no call either.
func TestSyncLoopIterationCoalesces(t *testing.T) {
	pod := testPod("uid-1")
	m, client, ctx := newTestManager(t, Config{}, pod)
	for i := range 50 {
		m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, Message: fmt.Sprintf("update %d", i)})
	}
	if len(m.syncCh) != 50 {
		t.Fatalf("%d UIDs queued, want one per update", len(m.syncCh))
	}
	for len(m.syncCh) > 0 {
		if !m.syncLoopIteration(ctx, nil) {
			t.Fatal("the loop stopped with ctx alive")
		}
	}
	if got := actionVerbs(client.Actions()); !reflect.DeepEqual(got, []string{"get pods", "patch pods/status"}) {
		t.Errorf("50 queued updates made %v, want one get and one patch", got)
	}
	if api := getAPIPod(t, ctx, client, "web"); api.Status.Message != "update 49" {
		t.Errorf("API message = %q, want the last one set", api.Status.Message)
	}

	client.ClearActions()
	tick := make(chan time.Time, 1)
	tick <- t0
	m.syncLoopIteration(ctx, tick)
	if len(client.Actions()) != 0 {
		t.Errorf("a resync with nothing pending made %v, want nothing", actionVerbs(client.Actions()))
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if m.syncLoopIteration(cancelled, nil) {
		t.Error("the loop went on after its context was cancelled")
	}
}

type fakeMirrors map[types.UID]*corev1.Pod

func (f fakeMirrors) GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool) {
	mirror, ok := f[pod.UID]
	return mirror, ok
}

var _ MirrorPodTranslator = fakeMirrors(nil)

// Upstream syncBatch/syncPod: a static pod's status is written to its mirror pod; until the mirror
// pod exists the sync is skipped and the resync tries again. Mirror pods are never deleted here.
func TestMirrorPodTranslation(t *testing.T) {
	static := testPod("static-uid")
	static.Name = "etcd-node1"
	static.Annotations = map[string]string{kubecontainer.ConfigSourceAnnotationKey: "file"}
	static.DeletionTimestamp = &metav1.Time{Time: t0}
	mirror := testPod("mirror-uid")
	mirror.Name = "etcd-node1"
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	mirror.DeletionTimestamp = &metav1.Time{Time: t0}

	mirrors := fakeMirrors{}
	m, client, ctx := newTestManager(t, Config{MirrorPods: mirrors}, mirror)
	m.SetPodStatus(static, corev1.PodStatus{Phase: corev1.PodRunning})

	// No mirror pod yet: nothing is sent, the status stays pending.
	if err := m.syncPod(ctx, static.UID); err != nil {
		t.Fatal(err)
	}
	if len(client.Actions()) != 0 {
		t.Errorf("without a mirror pod the sync made %v, want nothing", actionVerbs(client.Actions()))
	}

	mirrors[static.UID] = mirror
	m.syncAll(ctx)
	ps := patches(client.Actions())
	if len(ps) != 1 || ps[0].Name != "etcd-node1" {
		t.Fatalf("actions = %v, want one patch of the mirror pod", actionVerbs(client.Actions()))
	}
	var patch struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	if err := json.Unmarshal(ps[0].Patch, &patch); err != nil || patch.Metadata.UID != "mirror-uid" {
		t.Errorf("patch %s has UID precondition %q, want mirror-uid", ps[0].Patch, patch.Metadata.UID)
	}
	if api := getAPIPod(t, ctx, client, "etcd-node1"); api.Status.Phase != corev1.PodRunning {
		t.Errorf("mirror pod phase = %s, want Running", api.Status.Phase)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() == "delete" {
			t.Error("the status manager deleted a mirror pod")
		}
	}
	if m.Len() != 1 {
		t.Error("the static pod's status was dropped")
	}
}

// The journal shows each version bump, each PATCH with the phase it sent and the API server's
// response code (also a refused one), and the final delete of a deleted pod.
func TestJournalRecordsVersionsPatchesAndDelete(t *testing.T) {
	pod := testPod("uid-1")
	j := journal.NewWithClock(32, clock.RealClock{})
	m, client, ctx := newTestManager(t, Config{Journal: j.For(journal.SourceStatus)}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", "fake://a", true)}})
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(corev1.Resource("pods"), "web", errors.New("injected"))
	})
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	m.SetPodStatus(deleting, corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminated("a", 0)}})
	if err := m.syncPod(ctx, pod.UID); err == nil {
		t.Fatal("the refused patch was not reported")
	}
	client.ReactionChain = client.ReactionChain[1:]
	if _, err := client.CoreV1().Pods("default").Update(ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, e := range j.Read(0, journal.Filter{}).Events {
		if e.Source != journal.SourceStatus || e.Pod != "default/web" || e.UID != "uid-1" {
			t.Errorf("event %+v: want source status, pod default/web, UID uid-1", e)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s", e.Kind, e.Fields["version"], e.Fields["phase"], e.Fields["code"]))
	}
	want := []string{
		"version bump 1 Running ",
		"PATCH 1 Running 200",
		"version bump 2 Succeeded ",
		"PATCH 2 Succeeded 409",
		"PATCH 2 Succeeded 200",
		"delete   200",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("journal:\n got %q\nwant %q", got, want)
	}
}

package nodestatus

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

func newTestManager(t *testing.T, objects ...*corev1.Node) (*Manager, *fake.Clientset, *testingclock.FakeClock, *record.FakeRecorder) {
	t.Helper()
	client := fake.NewClientset()
	for _, n := range objects {
		if err := client.Tracker().Add(n); err != nil {
			t.Fatal(err)
		}
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	rec := record.NewFakeRecorder(100)
	m, err := New(Config{
		Client:   client,
		NodeName: "n1",
		NodeIP:   net.ParseIP("10.0.0.1"),
		Labels:   map[string]string{"example.com/pool": "a"},
		Taints:   []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}},
		Machine: Machine{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			Info:     corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64"},
		},
		CapacityOverrides: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")},
		MaxPods:           20,
		KubeletVersion:    "v1.36.3",
		KubeletPort:       10250,
		Recorder:          rec,
		Clock:             clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, client, clk, rec
}

func patches(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "patch" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// Registration creates the Node with its labels, taints, capacity (overrides win, pods = maxPods)
// and a Ready status, and records the condition events.
func TestRegisterCreatesNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, _, rec := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	node, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels[corev1.LabelHostname] != "n1" || node.Labels["example.com/pool"] != "a" || node.Labels[corev1.LabelArchStable] != "amd64" {
		t.Errorf("labels = %v", node.Labels)
	}
	if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints = %v", node.Spec.Taints)
	}
	if node.Status.Capacity.Cpu().String() != "16" || node.Status.Capacity.Pods().String() != "20" || node.Status.Capacity.Memory().String() != "4Gi" {
		t.Errorf("capacity = %v", node.Status.Capacity)
	}
	if readyStatus(node.Status) != corev1.ConditionTrue {
		t.Errorf("ready = %s", readyStatus(node.Status))
	}
	var events []string
	for len(rec.Events) > 0 {
		events = append(events, <-rec.Events)
	}
	if got := strings.Join(events, "|"); !strings.Contains(got, "NodeReady") || !strings.Contains(got, "NodeHasSufficientMemory") {
		t.Errorf("events = %v", events)
	}
}

// An existing Node is reconciled (our labels put back), not an error.
func TestRegisterReconcilesExistingNode(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	existing := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"keep": "me", corev1.LabelHostname: "old"}}}
	m, client, _, _ := newTestManager(t, existing)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if node.Labels["keep"] != "me" || node.Labels[corev1.LabelHostname] != "n1" || node.Labels["example.com/pool"] != "a" {
		t.Errorf("labels after reconcile = %v", node.Labels)
	}
}

// Upstream: with the Lease as the heartbeat, an unchanged status is reported every
// nodeStatusReportFrequency only; a change (a failed readiness check) is reported at once.
func TestSyncOnceReportsOnChangeOrInterval(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, clk, rec := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	for len(rec.Events) > 0 {
		<-rec.Events
	}
	client.ClearActions()
	clk.Step(10 * time.Second)
	if err := m.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := patches(client); n != 0 {
		t.Errorf("unchanged status after 10s: %d patches, want 0", n)
	}

	runtimeDown := errors.New("connection refused")
	m.AddReadinessCheck(ReadinessCheck{Name: "container runtime", Check: func() error { return runtimeDown }})
	clk.Step(10 * time.Second)
	if err := m.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := patches(client); n != 1 {
		t.Fatalf("Ready flipped: %d patches, want 1", n)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	ready := findCondition(node.Status, corev1.NodeReady)
	if ready.Status != corev1.ConditionFalse || !strings.Contains(ready.Message, "container runtime: connection refused") {
		t.Errorf("Ready = %+v", ready)
	}
	if ev := <-rec.Events; !strings.Contains(ev, "NodeNotReady") {
		t.Errorf("event = %q, want NodeNotReady", ev)
	}

	client.ClearActions()
	clk.Step(5*time.Minute - time.Second)
	_ = m.syncOnce(ctx)
	if n := patches(client); n != 0 {
		t.Errorf("before the report interval: %d patches, want 0", n)
	}
	clk.Step(time.Second)
	_ = m.syncOnce(ctx)
	if n := patches(client); n != 1 {
		t.Errorf("at the report interval: %d patches, want 1", n)
	}
}

// A Node the API server refuses on principle (403) is not retried forever.
func TestRegisterStopsOnForbidden(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, _, _ := newTestManager(t)
	client.PrependReactor("create", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n1", errors.New("not allowed"))
	})
	if err := m.Register(ctx); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("err = %v, want forbidden", err)
	}
}

// When kcm has marked the node Unknown (its Lease went stale, e.g. while the API server was down),
// the next turn reports Ready again, however recently the status was last reported. Here the
// watch never ran, so the turn reads the Node with a GET (upstream tryUpdateNodeStatus' retries).
func TestSyncOnceCorrectsReadyOverwrittenByOthers(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	m, client, clk, _ := newTestManager(t)
	if err := m.Register(ctx); err != nil {
		t.Fatal(err)
	}
	node, _ := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	ready := findCondition(node.Status, corev1.NodeReady)
	ready.Status, ready.Reason, ready.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	client.ClearActions()
	clk.Step(10 * time.Second)
	if err := m.syncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := patches(client); n != 1 {
		t.Errorf("Ready overwritten with Unknown: %d patches, want 1", n)
	}
	node, _ = client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if got := readyStatus(node.Status); got != corev1.ConditionTrue {
		t.Errorf("Ready = %s after the sync, want True", got)
	}
}

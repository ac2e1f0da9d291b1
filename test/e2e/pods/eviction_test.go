package pods

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// nodeCondition is the node's condition of type typ ("" status when it has none).
func nodeCondition(t *testing.T, name string, typ corev1.NodeConditionType) (corev1.NodeCondition, []corev1.Taint) {
	t.Helper()
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == typ {
			return c, node.Spec.Taints
		}
	}
	return corev1.NodeCondition{}, node.Spec.Taints
}

func hasTaint(taints []corev1.Taint, key string) bool {
	for _, t := range taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// nodeEventReasons are the reasons of the kubelet's Events about the node.
func nodeEventReasons(t *testing.T, name string) []string {
	t.Helper()
	list, err := cluster.Client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.kind", "Node"),
			fields.OneTermEqualSelector("involvedObject.name", name)).String()})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason)
	}
	return out
}

// The eviction manager (upstream pkg/kubelet/eviction) on a fake node of 2Gi with
// evictionHard memory.available<1Gi (from a config file, with a 30 s
// evictionPressureTransitionPeriod): a Guaranteed pod that allocates 700Mi of its 800Mi runs
// fine; a BestEffort pod that allocates 400Mi takes what is left below 1Gi. Then, as upstream:
// MemoryPressure turns True (KubeletHasInsufficientMemory, a NodeHasInsufficientMemory Event),
// the real controller-manager taints the node node.kubernetes.io/memory-pressure, the BestEffort
// pod — over its (zero) request — is evicted (Failed, reason Evicted, upstream's message, the
// DisruptionTarget condition, a Warning Event), a BestEffort pod bound to the node meanwhile is
// refused ("The node had condition: [MemoryPressure]. "), the Guaranteed pod — within its request
// — keeps running, and 30 s after the pressure ends the condition is False again and the taint
// gone.
func TestEvictionUnderMemoryPressure(t *testing.T) {
	config := filepath.Join(t.TempDir(), "kubelet.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"evictionHard: {memory.available: 1Gi}\nevictionPressureTransitionPeriod: 30s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "e2e-pods-eviction", "--config", config, "--node-capacity", "cpu=4,memory=2Gi,ephemeral-storage=20Gi",
		"--node-status-update-frequency", "2s")
	ns := namespace(t)

	guaranteed := podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "alloc 700Mi; sleep infinity")
	mem := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("800Mi")}
	guaranteed.Containers[0].Resources = corev1.ResourceRequirements{Requests: mem, Limits: mem}
	runningPod(t, ns, "guaranteed", guaranteed)
	if c, _ := nodeCondition(t, n.name, corev1.NodeMemoryPressure); c.Status != corev1.ConditionFalse {
		t.Fatalf("MemoryPressure with the Guaranteed pod alone: %+v, want False", c)
	}

	createPod(t, ns, "besteffort", podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "alloc 400Mi; sleep infinity"))
	framework.Eventually(t, time.Minute, "MemoryPressure True and the node tainted", func() (bool, string) {
		c, taints := nodeCondition(t, n.name, corev1.NodeMemoryPressure)
		return c.Status == corev1.ConditionTrue && hasTaint(taints, corev1.TaintNodeMemoryPressure), fmt.Sprintf("%+v taints %v", c, taints)
	})
	if c, _ := nodeCondition(t, n.name, corev1.NodeMemoryPressure); c.Reason != "KubeletHasInsufficientMemory" || c.Message != "kubelet has insufficient memory available" {
		t.Errorf("MemoryPressure = %+v, want upstream's reason and message", c)
	}

	// While the manager reports the pressure (30 s after it was last met), a BestEffort pod bound
	// to the node past the scheduler (which respects the taint) is refused.
	late := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	late.NodeSelector, late.NodeName = nil, n.name
	createPod(t, ns, "late", late)

	var evicted *corev1.Pod
	framework.Eventually(t, time.Minute, "besteffort Evicted", func() (bool, string) {
		evicted = getPod(t, ns, "besteffort")
		return evicted.Status.Phase == corev1.PodFailed && evicted.Status.Reason == "Evicted", describe(evicted)
	})
	const prefix = "The node was low on resource: memory. Threshold quantity: 1Gi, available: "
	if msg := evicted.Status.Message; !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, ". Container app was using ") ||
		!strings.HasSuffix(msg, ", request is 0, has larger consumption of memory. ") {
		t.Errorf("message %q, want upstream's %q… Container app was using …, request is 0, has larger consumption of memory. ", msg, prefix)
	}
	target := podCondition(evicted, corev1.DisruptionTarget)
	if target.Status != corev1.ConditionTrue || target.Reason != corev1.PodReasonTerminationByKubelet || target.Message != evicted.Status.Message {
		t.Errorf("DisruptionTarget = %+v, want True TerminationByKubelet with the message", target)
	}
	if events := cluster.Events(t, ns, "besteffort"); !framework.HasEvent(events, "kubelet Warning Evicted "+prefix) {
		t.Errorf("events of besteffort %q, want a Warning Evicted", events)
	}
	framework.Eventually(t, 30*time.Second, "late refused", func() (bool, string) {
		p := getPod(t, ns, "late")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" &&
			p.Status.Message == "Pod was rejected: The node had condition: [MemoryPressure]. ", describe(p)
	})
	if p := getPod(t, ns, "guaranteed"); p.Status.Phase != corev1.PodRunning || !isReady(p) {
		t.Errorf("guaranteed no longer runs: %s", describe(p))
	}
	if code, body := kubeletAPI(t, n, adminCert(t), "/metrics"); !strings.Contains(body, `kubelet_evictions{eviction_signal="memory.available"} 1`) {
		t.Errorf("/metrics (%d) has no kubelet_evictions{eviction_signal=\"memory.available\"} 1", code)
	}

	// The pressure is gone with the BestEffort pod: 30 s later the condition is False, and the
	// controller-manager lifts the taint.
	framework.Eventually(t, 2*time.Minute, "MemoryPressure False and the taint gone", func() (bool, string) {
		c, taints := nodeCondition(t, n.name, corev1.NodeMemoryPressure)
		return c.Status == corev1.ConditionFalse && !hasTaint(taints, corev1.TaintNodeMemoryPressure), fmt.Sprintf("%+v taints %v", c, taints)
	})
	reasons := strings.Join(nodeEventReasons(t, n.name), " ")
	for _, want := range []string{"NodeHasInsufficientMemory", "EvictionThresholdMet"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("node events %s, want %s", reasons, want)
		}
	}
	if p := getPod(t, ns, "guaranteed"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("guaranteed was evicted too: %s", describe(p))
	}
}

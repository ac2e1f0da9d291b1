package pods

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// The kubelet admits a pod only if its requests fit in the node's allocatable less what the
// active pods request (upstream lifecycle/predicate.go): a pod bound straight to the node
// (spec.nodeName, past the scheduler) that asks for more cpu than is left is rejected — phase
// Failed, reason OutOfcpu, upstream's message, a Warning Event — and the pod already running
// keeps running. The node's allocatable is its capacity less kubeReserved and the hard eviction
// thresholds (memory.available<100Mi by default).
func TestAdmissionByResources(t *testing.T) {
	n := startNode(t, "e2e-pods-admission", "--node-capacity", "cpu=2,memory=4Gi", "--kube-reserved", "cpu=100m")
	ns := namespace(t)
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu, mem := node.Status.Allocatable.Cpu(), node.Status.Allocatable.Memory(); cpu.String() != "1900m" || mem.Value() != 4<<30-100<<20 {
		t.Errorf("allocatable cpu %s memory %s, want 1900m (2 - 100m kubeReserved) and 4Gi - 100Mi", cpu, mem)
	}

	small := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	small.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	runningPod(t, ns, "small", small)

	oversized := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	oversized.NodeSelector, oversized.NodeName = nil, n.name // the scheduler would not place it
	oversized.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}
	createPod(t, ns, "oversized", oversized)
	const want = "Pod was rejected: Node didn't have enough resource: cpu, requested: 5000, used: 100, capacity: 1900"
	framework.Eventually(t, time.Minute, "oversized Failed with OutOfcpu", func() (bool, string) {
		p := getPod(t, ns, "oversized")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "OutOfcpu" && p.Status.Message == want, describe(p)
	})
	events, err := cluster.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=oversized,reason=OutOfcpu"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no OutOfcpu Event for oversized (%v)", err)
	}
	if st := n.fakeState(t); len(st.Sandboxes) != 1 {
		t.Errorf("the runtime has %d sandboxes, want only small's", len(st.Sandboxes))
	}
	if p := getPod(t, ns, "small"); p.Status.Phase != corev1.PodRunning || !isReady(p) {
		t.Errorf("small no longer runs: %s", describe(p))
	}
}

// A pod bound straight to the node that asks for a host port (protocol, hostIP) another admitted
// pod already holds is rejected at admission as upstream's NodePorts predicate does: phase
// Failed, reason NodePorts, upstream's message, a Warning Event; the holder keeps running.
func TestAdmissionByHostPorts(t *testing.T) {
	n := startNode(t, "e2e-pods-hostports")
	ns := namespace(t)
	withPort := func() corev1.PodSpec {
		spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
		spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 54321, Protocol: corev1.ProtocolTCP}}
		return spec
	}
	runningPod(t, ns, "holder", withPort())

	second := withPort()
	second.NodeSelector, second.NodeName = nil, n.name // the scheduler would not place it
	createPod(t, ns, "second", second)
	const want = "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	framework.Eventually(t, time.Minute, "second Failed with NodePorts", func() (bool, string) {
		p := getPod(t, ns, "second")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "NodePorts" && p.Status.Message == want, describe(p)
	})
	events, err := cluster.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=second,reason=NodePorts"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no NodePorts Event for second (%v)", err)
	}
	if p := getPod(t, ns, "holder"); p.Status.Phase != corev1.PodRunning {
		t.Errorf("holder no longer runs: %s", describe(p))
	}
}

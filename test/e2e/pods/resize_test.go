package pods

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// resizablePod is a Guaranteed pod: cpu and memory requests equal to limits, the container's
// resizePolicy for memory as given ("" leaves the default, NotRequired).
func resizablePod(nodeName, cpu, mem string, memPolicy corev1.ResourceResizeRestartPolicy) corev1.PodSpec {
	spec := podSpec(nodeName, corev1.RestartPolicyAlways, "sleep", "3600")
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
	if memPolicy != "" {
		spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: memPolicy}}
	}
	return spec
}

// resize asks for new cpu and memory (requests = limits) with kubectl patch --subresource resize.
func resize(t *testing.T, ns, name, cpu, mem string) (string, int) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":%q,"memory":%q},"limits":{"cpu":%q,"memory":%q}}}]}}`, cpu, mem, cpu, mem)
	return kubectl(t, "", "-n", ns, "patch", "pod", name, "--subresource", "resize", "-p", patch)
}

// resized reports whether the pod's status shows the resize done: observedGeneration caught up,
// no resize condition, and the container's status resources and allocatedResources cpu/mem.
func resized(p *corev1.Pod, cpu, mem string) bool {
	if p.Status.ObservedGeneration < p.Generation || len(p.Status.ContainerStatuses) != 1 {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
			return false
		}
	}
	cs := p.Status.ContainerStatuses[0]
	return cs.Resources != nil && cs.Resources.Limits.Cpu().Equal(resource.MustParse(cpu)) &&
		cs.Resources.Limits.Memory().Equal(resource.MustParse(mem)) && cs.AllocatedResources.Cpu().Equal(resource.MustParse(cpu)) &&
		cs.State.Running != nil
}

// In-place pod resize (upstream: the resize subresource → the kubelet's allocation → CRI
// UpdateContainerResources): raising a running container's cpu and memory updates its cgroup
// (here the fake runtime's recorded limits) without a restart under resizePolicy NotRequired,
// with one under RestartContainer; the status reports the new resources and no resize condition.
// A resize the node cannot give beside the other pods waits as PodResizePending Deferred with
// the admission's message; one over the node's allocatable is refused by the API server.
func TestInPlacePodResize(t *testing.T) {
	n := startNode(t, "e2e-pods-resize", "--node-capacity", "cpu=2,memory=4Gi")
	ns := namespace(t)
	runningPod(t, ns, "notreq", resizablePod(n.name, "100m", "64Mi", ""))
	runningPod(t, ns, "restart", resizablePod(n.name, "100m", "64Mi", corev1.RestartContainer))
	before := map[string]string{}
	for _, c := range n.fakeState(t).Containers {
		before[c.Name+c.SandboxID] = c.ID
	}
	for _, name := range []string{"notreq", "restart"} {
		if out, code := resize(t, ns, name, "200m", "128Mi"); code != 0 {
			t.Fatalf("kubectl patch --subresource resize %s: %d %s", name, code, out)
		}
	}
	framework.Eventually(t, time.Minute, "both pods resized", func() (bool, string) {
		a, b := getPod(t, ns, "notreq"), getPod(t, ns, "restart")
		return resized(a, "200m", "128Mi") && resized(b, "200m", "128Mi"), describe(a) + "\n" + describe(b)
	})
	// Upstream's Events of a resize: ResizeStarted at the allocation, ResizeCompleted (with the
	// resize's generation) once the runtime has it.
	framework.Eventually(t, time.Minute, "ResizeStarted and ResizeCompleted Events of notreq", func() (bool, string) {
		events := cluster.Events(t, ns, "notreq")
		done := framework.HasEvent(events, "kubelet Normal ResizeStarted Pod resize started: ") &&
			framework.HasEvent(events, "kubelet Normal ResizeCompleted Pod resize completed: ")
		return done && strings.Contains(strings.Join(events, "\n"), `"generation":2`), strings.Join(events, "\n")
	})
	if got := getPod(t, ns, "notreq").Status.ContainerStatuses[0].RestartCount; got != 0 {
		t.Errorf("NotRequired: restartCount %d, want 0", got)
	}
	if got := getPod(t, ns, "restart").Status.ContainerStatuses[0].RestartCount; got != 1 {
		t.Errorf("RestartContainer: restartCount %d, want 1", got)
	}
	running := 0
	for _, c := range n.fakeState(t).Containers {
		if c.State != "CONTAINER_RUNNING" {
			continue
		}
		running++
		if c.CPUQuota != 20000 || c.MemoryLimit != 128<<20 {
			t.Errorf("runtime container %s: cpu quota %d memory limit %d, want 20000 and 128Mi", c.ID, c.CPUQuota, c.MemoryLimit)
		}
		if _, old := before[c.Name+c.SandboxID]; !old && c.Attempt == 0 {
			t.Errorf("container %s is new but was not a restart", c.ID)
		}
	}
	if running != 2 {
		t.Errorf("%d running containers, want 2", running)
	}

	// restart holds 200m: notreq at 1900m does not fit beside it in 2 cpus.
	if out, code := resize(t, ns, "notreq", "1900m", "128Mi"); code != 0 {
		t.Fatalf("kubectl patch --subresource resize: %d %s", code, out)
	}
	const want = "Node didn't have enough resource: cpu, requested: 1900, used: 200, capacity: 2000"
	framework.Eventually(t, time.Minute, "notreq PodResizePending Deferred", func() (bool, string) {
		p := getPod(t, ns, "notreq")
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodResizePending && c.Reason == corev1.PodReasonDeferred && c.Message == want && c.ObservedGeneration == p.Generation {
				return p.Status.ContainerStatuses[0].Resources.Limits.Cpu().Equal(resource.MustParse("200m")), describe(p)
			}
		}
		return false, describe(p)
	})
	// Over the node's allocatable: the API server refuses it (upstream's PodResize admission).
	if out, code := resize(t, ns, "restart", "5", "128Mi"); code == 0 || !strings.Contains(out, "node didn't have enough allocatable resources") {
		t.Errorf("a resize over allocatable: exit %d %s, want the API server's refusal", code, out)
	}
}

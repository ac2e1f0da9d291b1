package containerd

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// Upstream's spec "[sig-node] Pods Extended Pod Container lifecycle evicted pods should be
// terminal" (test/e2e/node/pods.go), on containerd: a container limited to 5Mi of
// ephemeral-storage writes 10 MiB into its writable layer; containerd reports the layer's usage
// in CRI ContainerStats, and the eviction manager's local storage check (upstream
// podEphemeralStorageLimitEviction) evicts the pod — Failed, reason Evicted, upstream's message,
// a Warning Event — whatever the node's own thresholds.
//
// A finished pod stays beside it with its sandbox stopped: containerd 1.6 then fails
// ListPodSandboxStats as a whole ("failed to decode sandbox container metrics … is not in ready
// state"), and the stats provider must fall back to the containers' sums — logged once — for the
// eviction manager to see anything.
func TestEphemeralStorageLimitEviction(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-eviction", rt)
	ns := namespace(t)
	createPod(t, ns, "done", busyboxPod(n.name, corev1.RestartPolicyNever, "true"))
	framework.Eventually(t, time.Minute, "done Succeeded", func() (bool, string) {
		pod := getPod(t, ns, "done")
		return pod.Status.Phase == corev1.PodSucceeded, describe(pod)
	})
	spec := busyboxPod(n.name, corev1.RestartPolicyOnFailure, "sh", "-c", "sleep 1; dd if=/dev/zero of=file bs=1M count=10; sleep 10000")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("5Mi")}
	createPod(t, ns, "writer", spec)

	var pod *corev1.Pod
	framework.Eventually(t, 2*time.Minute, "writer Evicted", func() (bool, string) {
		pod = getPod(t, ns, "writer")
		return pod.Status.Phase == corev1.PodFailed, describe(pod)
	})
	const want = "Pod ephemeral local storage usage exceeds the total limit of containers 5Mi. "
	if pod.Status.Reason != "Evicted" || pod.Status.Message != want {
		t.Errorf("status %q %q, want Evicted %q", pod.Status.Reason, pod.Status.Message, want)
	}
	events, err := cluster.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", "writer"),
			fields.OneTermEqualSelector("reason", "Evicted")).String()})
	if err != nil || len(events.Items) == 0 || events.Items[0].Type != corev1.EventTypeWarning || !strings.HasPrefix(events.Items[0].Message, "Pod ephemeral") {
		t.Errorf("Evicted Events of writer: %v (%v), want a Warning with the message", events, err)
	}
	if log := n.proc.Log(); strings.Count(log, "The runtime cannot give pod sandbox stats") > 1 ||
		strings.Contains(log, "failed to get summary stats") {
		t.Errorf("minikubelet's log: the sandbox stats fallback logged more than once, or the eviction manager got no stats:\n%.3000s", log)
	}
}

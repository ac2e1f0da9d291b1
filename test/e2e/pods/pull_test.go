package pods

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// An image that cannot be pulled keeps its pod waiting with ErrImagePull, then ImagePullBackOff
// (the kubelet backs off instead of pulling in a loop), with the runtime's message; a pod beside
// it on the same node is not affected; once pulls work again the pod starts.
func TestImagePullFailureStaysWithItsPod(t *testing.T) {
	n := startNode(t, "e2e-pods-pull")
	ns := namespace(t)
	admin := fakeruntime.NewAdminClient(n.socket + ".admin")
	if err := admin.Inject(context.Background(), "fail-pulls", fakeruntime.FaultArgs{Image: "registry.example/broken:1.0", Count: 1000, Message: "registry.example: no such host"}); err != nil {
		t.Fatal(err)
	}

	broken := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	broken.Containers[0].Image = "registry.example/broken:1.0"
	createPod(t, ns, "broken", broken)
	runningPod(t, ns, "healthy", podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "3600"))

	seen := map[string]string{}
	framework.Eventually(t, 2*time.Minute, "ErrImagePull and then ImagePullBackOff", func() (bool, string) {
		pod := getPod(t, ns, "broken")
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
				seen[w.Reason] = w.Message
			}
		}
		_, pullErr := seen["ErrImagePull"]
		_, backOff := seen["ImagePullBackOff"]
		return pullErr && backOff, describe(pod)
	})
	if !strings.Contains(seen["ErrImagePull"], "no such host") {
		t.Errorf("ErrImagePull message %q does not carry the runtime's error", seen["ErrImagePull"])
	}
	if pod := getPod(t, ns, "healthy"); pod.Status.Phase != corev1.PodRunning || !isReady(pod) {
		t.Errorf("the healthy pod beside it is not Running and Ready: %s", describe(pod))
	}
	if err := admin.Inject(context.Background(), "fail-pulls", fakeruntime.FaultArgs{Image: "registry.example/broken:1.0", Count: 0}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the pod to start once pulls work", func() (bool, string) {
		pod := getPod(t, ns, "broken")
		return pod.Status.Phase == corev1.PodRunning, describe(pod)
	})
}

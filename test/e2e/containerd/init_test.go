package containerd

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// Real busybox init containers run in order on containerd, each to completion, before the app:
// init-b starts after init-a finished, and the app after both (the API's timestamps), and each
// init container's log is kept.
func TestInitContainersInOrder(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-init", rt)
	ns := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	for _, name := range []string{"init-a", "init-b"} {
		spec.InitContainers = append(spec.InitContainers, corev1.Container{Name: name, Image: busyboxImage,
			ImagePullPolicy: corev1.PullIfNotPresent, Command: []string{"sh", "-c", "echo " + name + " done; sleep 1"}})
	}
	pod := runningPod(t, ns, "ordered", spec)
	a, b := pod.Status.InitContainerStatuses[0].State.Terminated, pod.Status.InitContainerStatuses[1].State.Terminated
	if a == nil || b == nil || a.Reason != "Completed" || b.Reason != "Completed" {
		t.Fatalf("init containers = %s, want both Completed", describe(pod))
	}
	if b.StartedAt.Before(&a.FinishedAt) {
		t.Errorf("init-b started at %s, before init-a finished at %s", b.StartedAt, a.FinishedAt)
	}
	app := pod.Status.ContainerStatuses[0].State.Running
	if app == nil || app.StartedAt.Before(&b.FinishedAt) {
		t.Errorf("app %+v started before init-b finished at %s", pod.Status.ContainerStatuses[0].State, b.FinishedAt)
	}
	if out, code := kubectl(t, "-n", ns, "logs", "ordered", "-c", "init-b"); code != 0 || out != "init-b done\n" {
		t.Errorf("kubectl logs -c init-b: exit %d, %q", code, out)
	}
}

// A failing real init container with restartPolicy Never fails the pod; the app never starts.
func TestFailedInitContainerFailsPod(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-initfail", rt)
	ns := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyNever, "sleep", "3600")
	spec.InitContainers = []corev1.Container{{Name: "init-fail", Image: busyboxImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"sh", "-c", "echo cannot; exit 3"}}}
	createPod(t, ns, "doomed", spec)
	framework.Eventually(t, 2*time.Minute, "pod Failed", func() (bool, string) {
		p := getPod(t, ns, "doomed")
		return p.Status.Phase == corev1.PodFailed, describe(p)
	})
	p := getPod(t, ns, "doomed")
	if term := p.Status.InitContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 {
		t.Errorf("init-fail = %s, want terminated with exit 3", describe(p))
	}
	if out := rt.crictl(t, "ps", "-a", "--name", "^app$", "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("the app container was created: %q", out)
	}
}

// A real sidecar runs beside a Job-like app; when the app exits 0 the sidecar is stopped and the
// pod is Succeeded.
func TestSidecarWithJob(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-sidecar", rt)
	ns := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyNever, "sh", "-c", "sleep 3; echo job done")
	spec.InitContainers = []corev1.Container{{Name: "side-log", Image: busyboxImage, ImagePullPolicy: corev1.PullIfNotPresent,
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Command: []string{"sleep", "3600"}}}
	createPod(t, ns, "job", spec)
	framework.Eventually(t, 2*time.Minute, "pod Succeeded", func() (bool, string) {
		p := getPod(t, ns, "job")
		return p.Status.Phase == corev1.PodSucceeded, describe(p)
	})
	p := getPod(t, ns, "job")
	if side := p.Status.InitContainerStatuses[0].State.Terminated; side == nil {
		t.Errorf("sidecar = %s, want terminated after the app completed", describe(p))
	}
	if app := p.Status.ContainerStatuses[0].State.Terminated; app == nil || app.ExitCode != 0 {
		t.Errorf("app = %s, want completed", describe(p))
	}
}

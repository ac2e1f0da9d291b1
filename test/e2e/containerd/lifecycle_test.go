package containerd

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// terminatedState waits until the pod's first container has terminated and returns that state.
func terminatedState(t *testing.T, ns, name string) *corev1.ContainerStateTerminated {
	t.Helper()
	var term *corev1.ContainerStateTerminated
	framework.Eventually(t, 2*time.Minute, name+" terminated", func() (bool, string) {
		p := getPod(t, ns, name)
		if len(p.Status.ContainerStatuses) > 0 {
			term = p.Status.ContainerStatuses[0].State.Terminated
		}
		return term != nil, describe(p)
	})
	return term
}

// Hooks, termination messages, activeDeadlineSeconds and the kubelet's Events with real busybox
// containers: a preStop hook writes the termination message of a pod stopped at its deadline; a
// FallbackToLogsOnError message comes from the log; a failing postStart hook restarts the
// container; `kubectl describe pod` lists the kubelet's Events.
func TestHooksMessagesDeadline(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-hooks", rt)
	ns := namespace(t)

	polite := busyboxPod(n.name, corev1.RestartPolicyNever, "sleep", "3600")
	polite.ActiveDeadlineSeconds = ptr.To[int64](3)
	polite.Containers[0].TerminationMessagePath = "/dev/termination-log"
	polite.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
		Command: []string{"sh", "-c", "echo -n stopped by preStop > /dev/termination-log"}}}}
	createPod(t, ns, "polite", polite)

	fromLog := busyboxPod(n.name, corev1.RestartPolicyNever, "sh", "-c", "echo last words; exit 2")
	fromLog.Containers[0].TerminationMessagePath = "/dev/termination-log"
	fromLog.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	createPod(t, ns, "from-log", fromLog)

	hooked := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	hooked.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "exit 1"}}}}
	createPod(t, ns, "hooked", hooked)

	if term := terminatedState(t, ns, "polite"); term.Message != "stopped by preStop" {
		t.Errorf("polite: termination message %q, want the preStop hook's", term.Message)
	}
	framework.Eventually(t, time.Minute, "polite Failed DeadlineExceeded", func() (bool, string) {
		p := getPod(t, ns, "polite")
		return p.Status.Phase == corev1.PodFailed && p.Status.Reason == "DeadlineExceeded", describe(p)
	})
	if term := terminatedState(t, ns, "from-log"); term.Message != "last words\n" || term.ExitCode != 2 {
		t.Errorf("from-log: %+v, want the log's tail as its message", term)
	}
	framework.Eventually(t, 2*time.Minute, "hooked restarted after its postStart hook failed", func() (bool, string) {
		p := getPod(t, ns, "hooked")
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1, describe(p)
	})
	out, _ := kubectl(t, "-n", ns, "describe", "pod", "hooked")
	// Events from the kubelet (the From column), about the container's field path.
	for _, want := range []string{`Created\s.*kubelet\s+spec.containers\{app\}: Container created`, `Started\s.*kubelet\s+spec.containers\{app\}: Container started`,
		`FailedPostStartHook\s.*kubelet\s+spec.containers\{app\}: PostStartHook failed`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("kubectl describe pod hooked does not show %q:\n%s", want, tail(out, 15))
		}
	}
	out, _ = kubectl(t, "-n", ns, "describe", "pod", "polite")
	if !strings.Contains(out, "DeadlineExceeded") || !strings.Contains(out, "Stopping container app") {
		t.Errorf("kubectl describe pod polite does not show the deadline and the kill:\n%s", tail(out, 15))
	}
}

// The service account token the kubelet projects is readable in a real container, at the path
// the docs give, and the API server accepts it as the pod's service account, bound to the pod.
func TestTokenInContainer(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-token", rt)
	ns := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	spec.AutomountServiceAccountToken = ptr.To(true)
	pod := runningPod(t, ns, "reader", spec)
	token, code := kubectl(t, "-n", ns, "exec", "reader", "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token")
	if code != 0 || token == "" {
		t.Fatalf("cat the token in the container: exit %d", code)
	}
	review, err := cluster.Client.AuthenticationV1().TokenReviews().Create(context.Background(),
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := review.Status.User
	if !review.Status.Authenticated || u.Username != "system:serviceaccount:"+ns+":default" ||
		strings.Join(u.Extra["authentication.kubernetes.io/pod-uid"], "") != string(pod.UID) {
		t.Errorf("TokenReview: authenticated %v as %q, pod-uid %v; want the pod's service account bound to uid %s",
			review.Status.Authenticated, u.Username, u.Extra["authentication.kubernetes.io/pod-uid"], pod.UID)
	}
}

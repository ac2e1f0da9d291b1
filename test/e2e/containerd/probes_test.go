package containerd

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// The liveness-exec example of the Kubernetes docs, unchanged but for its timings, in a real
// busybox container: the probe reads a file the container removes after a few seconds; then the
// probe fails and the kubelet kills and restarts the container.
func TestLivenessExecDocsExample(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-liveness", rt)
	ns := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "/bin/sh", "-c", "touch /tmp/healthy; sleep 5; rm -f /tmp/healthy; sleep 600")
	spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
		PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 1, SuccessThreshold: 1,
	}
	runningPod(t, ns, "liveness-exec", spec)
	framework.Eventually(t, 2*time.Minute, "restarted once /tmp/healthy is gone", func() (bool, string) {
		p := getPod(t, ns, "liveness-exec")
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].RestartCount >= 1, describe(p)
	})
	out, _ := kubectl(t, "-n", ns, "describe", "pod", "liveness-exec")
	for _, want := range []string{"Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory",
		"Container app failed liveness probe, will be restarted"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe pod does not show %q:\n%s", want, tail(out, 20))
		}
	}
}

// httpGet and tcpSocket probes against a real server in a host-network busybox pod (busybox
// httpd on 127.0.0.1): Ready while the page is there, not Ready once `kubectl exec` removes it,
// Ready again when it is back — readiness follows the probe both ways, and never restarts.
func TestHTTPAndTCPProbes(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-http", rt)
	ns := namespace(t)
	port := framework.FreePort(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c",
		"mkdir -p /www && echo ok > /www/ready.html && exec httpd -f -p 127.0.0.1:"+strconv.Itoa(port)+" -h /www")
	spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready.html", Port: intstr.FromInt32(int32(port))}},
		PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 1, SuccessThreshold: 1,
	}
	spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
		PeriodSeconds: 1, FailureThreshold: 3, TimeoutSeconds: 1, SuccessThreshold: 1,
	}
	runningPod(t, ns, "web", spec) // Running and Ready: the HTTP probe got 200
	if _, code := kubectl(t, "-n", ns, "exec", "web", "--", "rm", "/www/ready.html"); code != 0 {
		t.Fatal("kubectl exec rm failed")
	}
	framework.Eventually(t, time.Minute, "not Ready once the page is gone (404)", func() (bool, string) {
		p := getPod(t, ns, "web")
		return !isReady(p), describe(p)
	})
	if _, code := kubectl(t, "-n", ns, "exec", "web", "--", "sh", "-c", "echo ok > /www/ready.html"); code != 0 {
		t.Fatal("kubectl exec echo failed")
	}
	framework.Eventually(t, time.Minute, "Ready again", func() (bool, string) {
		p := getPod(t, ns, "web")
		return isReady(p), describe(p)
	})
	if p := getPod(t, ns, "web"); p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("restarted %d times: readiness never restarts, and the TCP liveness probe passes", p.Status.ContainerStatuses[0].RestartCount)
	}
	out, _ := kubectl(t, "-n", ns, "describe", "pod", "web")
	if !strings.Contains(out, "Readiness probe failed: HTTP probe failed with statuscode: 404") {
		t.Errorf("kubectl describe pod does not show the readiness failure:\n%s", tail(out, 20))
	}
}

package containerd

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// A busybox pod runs in containerd as the real kubelet runs it: the Node reports the runtime's
// own version (CRI Version, "containerd://1.6.x"); the container's CRI log is what `kubectl logs`
// shows; `kubectl exec` goes API server → our :10250 → containerd's streaming server and runs in
// the container's own mount namespace; crictl sees the pod with the upstream labels; `kubectl
// delete pod` stops it within its grace period and housekeeping removes its sandbox and containers
// from the runtime.
func TestBusyboxPod(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-pod", rt, "--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local")
	ns := namespace(t)
	ctx := context.Background()

	// The node's runtime version is containerd's answer to CRI Version.
	var criVersion string
	for _, line := range strings.Split(rt.crictl(t, "version"), "\n") {
		if v, ok := strings.CutPrefix(line, "RuntimeVersion:"); ok {
			criVersion = strings.TrimSpace(v)
		}
	}
	node, err := cluster.Client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := node.Status.NodeInfo.ContainerRuntimeVersion, "containerd://"+criVersion; criVersion == "" || got != want {
		t.Errorf("node containerRuntimeVersion = %q, want %q (crictl version)", got, want)
	}
	t.Logf("node %s: containerRuntimeVersion %s", n.name, node.Status.NodeInfo.ContainerRuntimeVersion)

	pod := runningPod(t, ns, "shell", busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo started; sleep 3600"))
	if id := pod.Status.ContainerStatuses[0].ContainerID; !strings.HasPrefix(id, "containerd://") {
		t.Errorf("containerID %q, want containerd://…", id)
	}
	if pod.Status.PodIP != "127.0.0.1" {
		t.Errorf("a host-network pod's IP is the node's: got %q, want 127.0.0.1", pod.Status.PodIP)
	}
	out, _ := kubectl(t, "-n", ns, "get", "pods", "-o", "wide")
	t.Logf("kubectl get pods -o wide:\n%s", out)

	// logs: containerd wrote the CRI log file where the kubelet reads it.
	framework.Eventually(t, 30*time.Second, "kubectl logs to show the container's output", func() (bool, string) {
		out, code := kubectl(t, "-n", ns, "logs", "shell")
		return code == 0 && out == "started\n", fmt.Sprintf("exit %d: %q", code, out)
	})

	// exec runs in the container: its /etc/hostname is the file containerd made for the sandbox
	// (a host-network pod keeps the node's hostname), its / is the image's, not the host's.
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if out, code := kubectl(t, "-n", ns, "exec", "shell", "--", "cat", "/etc/hostname"); code != 0 || strings.TrimSpace(out) != hostname {
		t.Errorf("kubectl exec -- cat /etc/hostname: exit %d, %q, want %q", code, out, hostname)
	}
	out, code := kubectl(t, "-n", ns, "exec", "shell", "--", "ls", "/")
	root := strings.Fields(out)
	if code != 0 || !slices.Contains(root, "bin") || !slices.Contains(root, "proc") || slices.Contains(root, "usr") {
		t.Errorf("kubectl exec -- ls /: exit %d, %q; want the image's root (bin, proc, no usr)", code, out)
	}
	t.Logf("kubectl exec shell -- ls /: %s", strings.Join(root, " "))
	if out, code := kubectl(t, "-n", ns, "exec", "shell", "--", "sh", "-c", "exit 3"); code != 3 {
		t.Errorf("kubectl exec -- sh -c 'exit 3': exit %d, want 3; %q", code, out)
	}

	// crictl sees what the kubelet made, under the pod's name and namespace.
	sandboxes := rt.pods(t, ns)
	containers := rt.containers(t, sandboxes)
	if len(sandboxes) != 1 || sandboxes[0].Metadata.Name != "shell" || sandboxes[0].State != "SANDBOX_READY" ||
		len(containers) != 1 || containers[0].Metadata.Name != "app" || containers[0].State != "CONTAINER_RUNNING" {
		t.Errorf("crictl: sandboxes %+v, containers %+v; want shell ready with app running", sandboxes, containers)
	}
	t.Logf("crictl pods:\n%s", rt.crictl(t, "pods", "--namespace", ns))
	t.Logf("crictl ps -a:\n%s", rt.crictl(t, "ps", "-a"))

	// Deletion: the pod goes from the API, then its sandbox and containers from the runtime.
	start := time.Now()
	if out, code := kubectl(t, "-n", ns, "delete", "pod", "shell", "--timeout=60s"); code != 0 {
		t.Fatalf("kubectl delete pod: exit %d\n%s", code, out)
	}
	t.Logf("kubectl delete pod shell took %s (grace period 5 s)", time.Since(start).Round(time.Millisecond))
	framework.Eventually(t, time.Minute, "no sandbox or container of the pod in containerd", func() (bool, string) {
		sandboxes := rt.pods(t, ns)
		all := rt.crictl(t, "ps", "-a", "-q")
		return len(sandboxes) == 0 && strings.TrimSpace(all) == "", fmt.Sprintf("sandboxes %+v; containers %q", sandboxes, all)
	})

	// /etc/resolv.conf is the file containerd writes from the sandbox's DnsConfig: for a
	// host-network pod with dnsPolicy ClusterFirstWithHostNet, clusterDNS and the cluster's search
	// domains before the node's, ndots:5 (pkg/dns, upstream's dns.Configurer).
	dnsNS := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	runningPod(t, dnsNS, "dns", spec)
	out, code = kubectl(t, "-n", dnsNS, "exec", "dns", "--", "cat", "/etc/resolv.conf")
	if want := "search " + dnsNS + ".svc.cluster.local svc.cluster.local cluster.local"; code != 0 || !strings.HasPrefix(out, want) ||
		!strings.Contains(out, "\nnameserver 10.96.0.10\n") || strings.Count(out, "nameserver") != 1 || !strings.Contains(out, "options ndots:5") {
		t.Errorf("ClusterFirstWithHostNet /etc/resolv.conf (exit %d):\n%s\nwant %q…, only nameserver 10.96.0.10, options ndots:5", code, out, want)
	}
	t.Logf("kubectl exec dns -- cat /etc/resolv.conf:\n%s", out)
}

// restartPolicy Always with a container that exits 1: restarts behind the crash-loop back-off,
// shown as CrashLoopBackOff with the last exit code (upstream: kuberuntime's backOff).
func TestCrashLoopBackOff(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-crash", rt)
	ns := namespace(t)
	createPod(t, ns, "crasher", busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo crashing; exit 1"))
	framework.Eventually(t, 2*time.Minute, "crasher in CrashLoopBackOff after exiting 1", func() (bool, string) {
		p := getPod(t, ns, "crasher")
		if len(p.Status.ContainerStatuses) == 0 {
			return false, describe(p)
		}
		cs := p.Status.ContainerStatuses[0]
		last := cs.LastTerminationState.Terminated
		return cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" &&
			cs.RestartCount >= 1 && last != nil && last.ExitCode == 1, describe(p)
	})
	if out, code := kubectl(t, "-n", ns, "logs", "crasher", "--previous"); code != 0 || out != "crashing\n" {
		t.Errorf("kubectl logs --previous: exit %d, %q", code, out)
	}
	out, _ := kubectl(t, "-n", ns, "get", "pods")
	t.Logf("kubectl get pods:\n%s", out)
	t.Logf("crictl ps -a:\n%s", rt.crictl(t, "ps", "-a"))
}

// A Secret reaches the real container both ways the kubelet projects it: as a file of a secret
// volume (bind-mounted by containerd from the pod's volume directory) and as an env var.
func TestSecretVolumeAndEnv(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-secret", rt)
	ns := namespace(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "s3cret"}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo started; sleep 3600")
	spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "creds", MountPath: "/etc/creds", ReadOnly: true}}
	spec.Containers[0].Env = []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}
	runningPod(t, ns, "app", spec)

	if out, code := kubectl(t, "-n", ns, "exec", "app", "--", "cat", "/etc/creds/password"); code != 0 || out != "s3cret" {
		t.Errorf("kubectl exec -- cat /etc/creds/password: exit %d, %q, want \"s3cret\"", code, out)
	}
	if out, code := kubectl(t, "-n", ns, "exec", "app", "--", "sh", "-c", "echo $PASSWORD"); code != 0 || out != "s3cret\n" {
		t.Errorf("kubectl exec -- sh -c 'echo $PASSWORD': exit %d, %q", code, out)
	}
	// Read-only, as the volumeMount says: the container cannot change the node's copy.
	if out, code := kubectl(t, "-n", ns, "exec", "app", "--", "sh", "-c", "echo x > /etc/creds/password"); code == 0 {
		t.Errorf("writing into the read-only secret volume succeeded: %q", out)
	}
}

// The runtime is part of node health (upstream: runtimeState, "container runtime is down"): with
// containerd stopped the node goes Ready=False with the reason in its message; started again, the
// node is Ready and the pod that kept running under its shim is still reported, the same
// container, never restarted.
func TestRuntimeDownAndBack(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-restart", rt)
	ns := namespace(t)
	before := runningPod(t, ns, "survivor", busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo started; sleep 3600")).Status.ContainerStatuses[0]

	stopped := time.Now()
	rt.stop(t)
	down := waitNodeReady(t, n.name, corev1.ConditionFalse, "container runtime is down")
	t.Logf("containerd stopped: after %s node Ready=%s reason %s: %s", time.Since(stopped).Round(time.Second), down.Status, down.Reason, down.Message)

	started := time.Now()
	rt.start(t)
	waitNodeReady(t, n.name, corev1.ConditionTrue, "")
	t.Logf("containerd started again: node Ready after %s (status every 10 s)", time.Since(started).Round(time.Second))
	framework.Eventually(t, time.Minute, "survivor still running, the same container", func() (bool, string) {
		p := getPod(t, ns, "survivor")
		cs := p.Status.ContainerStatuses[0]
		return p.Status.Phase == corev1.PodRunning && isReady(p) && cs.State.Running != nil &&
			cs.ContainerID == before.ContainerID && cs.RestartCount == 0, describe(p)
	})
	containers := rt.containers(t, rt.pods(t, ns))
	if len(containers) != 1 || "containerd://"+containers[0].ID != before.ContainerID || containers[0].State != "CONTAINER_RUNNING" {
		t.Errorf("after the restart crictl shows %+v, want the one container %s running", containers, before.ContainerID)
	}
	if out, code := kubectl(t, "-n", ns, "exec", "survivor", "--", "echo", "still here"); code != 0 || out != "still here\n" {
		t.Errorf("kubectl exec after the runtime came back: exit %d, %q", code, out)
	}
}

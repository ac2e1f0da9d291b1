// Package pods tests the pod lifecycle end to end — pod sources, syncLoop, PLEG, pod workers,
// status manager — against the real control plane (with kube-scheduler) and the fake runtime.
package pods

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string
)

func TestMain(m *testing.M) {
	os.Exit(framework.MainWithMinikubelet(m.Run, framework.Options{}, &cluster, &minikubelet))
}

// node is a running minikubelet for one test.
type node struct {
	name    string
	rootDir string
	socket  string // its fake runtime
	port    int    // its kubelet API (:10250 of a real node), on 127.0.0.1
	healthz int    // its plain-HTTP /healthz (:10248 of a real node), on 127.0.0.1
	proc    *framework.Process
	args    []string
}

// startNode runs minikubelet as node name with its own fake runtime (in-process unless extra
// names an endpoint), and waits until the node is Ready.
func startNode(t *testing.T, name string, extra ...string) *node {
	t.Helper()
	return startNodeWith(t, minikubelet, name, extra...)
}

// startNodeWith is startNode with another build of minikubelet (tokens_test.go: one without -race).
func startNodeWith(t *testing.T, bin, name string, extra ...string) *node {
	t.Helper()
	rootDir, err := os.MkdirTemp("", "mkp") // short: the fake runtime's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	n := &node{name: name, rootDir: rootDir, socket: filepath.Join(rootDir, "fake-runtime.sock"), port: framework.FreePort(t), healthz: framework.FreePort(t)}
	n.args = append([]string{
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(n.port), "-v", "3", // 3: housekeeping counts
		// As a kubeadm node: /healthz on a port of its own (nodes of parallel tests share
		// 127.0.0.1), the cluster DNS Service's IP and domain for ClusterFirst pods' resolv.conf.
		"--healthz-port", strconv.Itoa(n.healthz), "--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local",
	}, extra...)
	n.proc = framework.StartProcess(t, bin, n.args...)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cluster.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	})
	framework.Eventually(t, time.Minute, "node "+name+" Ready", func() (bool, string) {
		n, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, c.Message
			}
		}
		return false, "no Ready condition"
	})
	return n
}

// fakeState is what the node's fake runtime holds.
func (n *node) fakeState(t *testing.T) fakeruntime.State {
	t.Helper()
	st, err := fakeruntime.NewAdminClient(n.socket + ".admin").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-pods-"}}
	ns, err := cluster.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

func podSpec(nodeName string, policy corev1.RestartPolicy, command ...string) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelHostname: nodeName},
		RestartPolicy:                 policy,
		AutomountServiceAccountToken:  ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](5),
		Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: command}},
	}
}

func createPod(t *testing.T, ns, name string, spec corev1.PodSpec) *corev1.Pod {
	t.Helper()
	pod, err := cluster.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describe(pod *corev1.Pod) string {
	data, _ := json.Marshal(pod.Status)
	return pod.Name + " " + string(pod.Status.Phase) + " " + string(data)
}

// A Deployment of 10 replicas is scheduled onto our node and runs: every pod Running and Ready
// with an IP. Deleting one pod completes within its grace period; deleting the Deployment leaves
// no pod, worker, status entry or sandbox behind.
func TestDeploymentRunsAndCleansUp(t *testing.T) {
	n := startNode(t, "e2e-pods-deploy")
	ns := namespace(t)
	ctx := context.Background()
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](10),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"),
			},
		},
	}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	selector := labels.SelectorFromSet(map[string]string{"app": "web"}).String()
	framework.Eventually(t, 3*time.Minute, "10 pods Running and Ready", func() (bool, string) {
		list, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		ready := 0
		for i := range list.Items {
			p := &list.Items[i]
			if p.Spec.NodeName == n.name && p.Status.Phase == corev1.PodRunning && isReady(p) && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
				ready++
			}
		}
		return ready == 10, fmt.Sprintf("%d of %d ready", ready, len(list.Items))
	})
	out, err := cluster.KubectlOutput("-n", ns, "get", "pods", "-o", "wide")
	if err != nil || strings.Count(out, n.name) != 10 || !strings.Contains(out, "127.88.") {
		t.Errorf("kubectl get pods -o wide (err %v):\n%s", err, out)
	}
	t.Logf("kubectl get pods -o wide:\n%s", out)

	// kubectl delete pod returns once the kubelet has stopped it and finished the deletion.
	list, _ := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	victim := list.Items[0].Name
	start := time.Now()
	if out, err := cluster.KubectlOutput("-n", ns, "delete", "pod", victim, "--timeout=60s"); err != nil {
		t.Fatalf("kubectl delete pod: %v\n%s", err, out)
	}
	t.Logf("kubectl delete pod %s took %s (grace period 5s)", victim, time.Since(start).Round(time.Millisecond))

	// Deleting the Deployment: all pods go, and the node keeps nothing of them.
	if err := cluster.Client.AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "every pod gone from the API", func() (bool, string) {
		list, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d pods left", len(list.Items))
	})
	framework.Eventually(t, time.Minute, "no sandbox, container, worker or status left", func() (bool, string) {
		st := n.fakeState(t)
		housekeeping := lastLine(n.proc.Log(), "Housekeeping")
		clean := strings.Contains(housekeeping, "podWorkers=0") && strings.Contains(housekeeping, "statuses=0")
		return len(st.Sandboxes) == 0 && len(st.Containers) == 0 && clean,
			fmt.Sprintf("%d sandboxes, %d containers; %s", len(st.Sandboxes), len(st.Containers), housekeeping)
	})
}

func lastLine(log, containing string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], containing) {
			return lines[i]
		}
	}
	return ""
}

// restartPolicy, as upstream: Always restarts a failing container with a growing back-off and
// shows CrashLoopBackOff; Never ends Failed (exit 1) or Succeeded (exit 0).
func TestRestartPolicies(t *testing.T) {
	n := startNode(t, "e2e-pods-restart")
	ns := namespace(t)
	createPod(t, ns, "crasher", podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "exit 1"))
	createPod(t, ns, "fails", podSpec(n.name, corev1.RestartPolicyNever, "sh", "-c", "exit 1"))
	createPod(t, ns, "completes", podSpec(n.name, corev1.RestartPolicyNever, "sleep", "2"))

	framework.Eventually(t, 2*time.Minute, "fails to end Failed", func() (bool, string) {
		p := getPod(t, ns, "fails")
		return p.Status.Phase == corev1.PodFailed, describe(p)
	})
	framework.Eventually(t, 2*time.Minute, "completes to end Succeeded", func() (bool, string) {
		p := getPod(t, ns, "completes")
		return p.Status.Phase == corev1.PodSucceeded, describe(p)
	})
	var sawBackOff bool
	framework.Eventually(t, 3*time.Minute, "crasher restarting in CrashLoopBackOff", func() (bool, string) {
		p := getPod(t, ns, "crasher")
		if len(p.Status.ContainerStatuses) == 0 {
			return false, describe(p)
		}
		cs := p.Status.ContainerStatuses[0]
		if cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
			sawBackOff = true
		}
		return sawBackOff && cs.RestartCount >= 2 && cs.LastTerminationState.Terminated != nil &&
			cs.LastTerminationState.Terminated.ExitCode == 1, describe(p)
	})
	out, _ := cluster.KubectlOutput("-n", ns, "get", "pods")
	t.Logf("kubectl get pods:\n%s", out)
}

// PLEG notices a container killed behind the kubelet's back (fault injection) and the pod
// worker restarts it.
func TestKilledContainerIsRestarted(t *testing.T) {
	n := startNode(t, "e2e-pods-kill")
	ns := namespace(t)
	createPod(t, ns, "victim", podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"))
	var containerID string
	framework.Eventually(t, time.Minute, "victim Running", func() (bool, string) {
		p := getPod(t, ns, "victim")
		if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil {
			containerID = p.Status.ContainerStatuses[0].ContainerID
			return true, ""
		}
		return false, describe(p)
	})
	id := containerID[strings.Index(containerID, "://")+3:]
	if code, out := framework.RunToExit(t, time.Minute, minikubelet, "fake-runtime", "kill-container", id, "--exit-code", "9", "--socket", n.socket); code != 0 {
		t.Fatalf("kill-container: %d\n%s", code, out)
	}
	framework.Eventually(t, time.Minute, "the killed container restarted", func() (bool, string) {
		p := getPod(t, ns, "victim")
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil && cs.LastTerminationState.Terminated != nil &&
			cs.LastTerminationState.Terminated.ExitCode == 9, describe(p)
	})
}

// A static pod manifest runs and gets a mirror pod in the API; removing the file removes both;
// a broken manifest is reported with an event and does not stop the others.
func TestStaticPods(t *testing.T) {
	manifests := t.TempDir()
	n := startNode(t, "e2e-pods-static", "--pod-manifest-path", manifests)
	ctx := context.Background()
	good := `apiVersion: v1
kind: Pod
metadata:
  name: static-web
spec:
  containers:
  - name: web
    image: busybox:1.36
    command: ["sleep", "infinity"]
`
	if err := os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "broken.yaml"), []byte("apiVersion: v1\nkind: Pod\nspec: [this is not a pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mirrorName := "static-web-" + n.name
	framework.Eventually(t, 2*time.Minute, "the mirror pod, Running", func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods("default").Get(ctx, mirrorName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, mirror := p.Annotations["kubernetes.io/config.mirror"]
		return mirror && p.Status.Phase == corev1.PodRunning, describe(p)
	})
	framework.Eventually(t, time.Minute, "an event about the broken manifest", func() (bool, string) {
		events, err := cluster.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == n.name && strings.Contains(e.Message, "broken.yaml") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, none about broken.yaml", len(events.Items))
	})
	if err := os.Remove(filepath.Join(manifests, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the mirror pod and the runtime pod gone", func() (bool, string) {
		_, err := cluster.Client.CoreV1().Pods("default").Get(ctx, mirrorName, metav1.GetOptions{})
		st := n.fakeState(t)
		return err != nil && len(st.Sandboxes) == 0, fmt.Sprintf("get mirror: %v; %d sandboxes", err, len(st.Sandboxes))
	})
}

// A restarted kubelet adopts what runs in a standalone runtime: same container, restartCount
// unchanged.
func TestRestartAdoptsRunningPods(t *testing.T) {
	dir, err := os.MkdirTemp("", "mkr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "cri.sock")
	framework.StartProcess(t, minikubelet, "fake-runtime", "serve", "--socket", socket)
	framework.Eventually(t, 30*time.Second, "the standalone fake runtime", func() (bool, string) {
		_, err := os.Stat(socket + ".admin")
		return err == nil, fmt.Sprint(err)
	})
	n := startNode(t, "e2e-pods-adopt", "--container-runtime-endpoint", "unix://"+socket)
	ns := namespace(t)
	createPod(t, ns, "survivor", podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity"))
	var before corev1.ContainerStatus
	framework.Eventually(t, time.Minute, "survivor Running", func() (bool, string) {
		p := getPod(t, ns, "survivor")
		if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil {
			before = p.Status.ContainerStatuses[0]
			return true, ""
		}
		return false, describe(p)
	})
	if err := n.proc.Signal(15); err != nil {
		t.Fatal(err)
	}
	if code, err := n.proc.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("SIGTERM: exit %d, %v", code, err)
	}
	restarted := framework.StartProcess(t, minikubelet, n.args...)
	framework.Eventually(t, time.Minute, "the restarted kubelet to sync the pod", func() (bool, string) {
		return strings.Contains(restarted.Log(), "survivor"), "no mention of survivor yet"
	})
	// Give the restarted kubelet a few sync rounds, then the container must be the same one.
	framework.Eventually(t, time.Minute, "housekeeping after the restart", func() (bool, string) {
		return strings.Count(restarted.Log(), "Housekeeping") >= 3, ""
	})
	p := getPod(t, ns, "survivor")
	after := p.Status.ContainerStatuses[0]
	if after.ContainerID != before.ContainerID || after.RestartCount != before.RestartCount || after.State.Running == nil {
		t.Errorf("after the kubelet restart: %+v, before: %+v", after, before)
	}
	if st, err := fakeruntime.NewAdminClient(socket + ".admin").State(context.Background()); err != nil || len(st.Containers) != 1 {
		t.Errorf("runtime holds %d containers (err %v), want the 1 adopted", len(st.Containers), err)
	}
}

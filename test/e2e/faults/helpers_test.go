package faults

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// node is a minikubelet process and its standalone fake runtime, each a real process that a
// test may kill and start again on its own.
type node struct {
	name    string
	rootDir string
	socket  string // the fake runtime's CRI socket (its admin socket is socket + ".admin")
	port    int    // the kubelet API, on 127.0.0.1
	args    []string
	kubelet *framework.Process
	runtime *framework.Process
}

// startNode starts a standalone fake runtime, then minikubelet as node name pointed at it, and
// waits until the node is Ready. extra flags are appended to minikubelet's.
func startNode(t *testing.T, name string, extra ...string) *node {
	t.Helper()
	rootDir, err := os.MkdirTemp("", "mkf") // short: unix socket paths are limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	n := &node{name: name, rootDir: rootDir, socket: filepath.Join(rootDir, "rt.sock"), port: framework.FreePort(t)}
	n.startRuntime(t)
	n.args = append([]string{
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(n.port),
		"--container-runtime-endpoint", "unix://" + n.socket,
	}, extra...)
	n.kubelet = framework.StartProcess(t, minikubelet, n.args...)
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	n.waitReady(t, corev1.ConditionTrue, time.Minute)
	return n
}

// startRuntime starts `minikubelet fake-runtime serve` on the node's socket (replacing the stale
// socket a killed one left) and waits until its admin API answers.
func (n *node) startRuntime(t *testing.T) {
	t.Helper()
	n.runtime = framework.StartProcess(t, minikubelet, "fake-runtime", "serve", "--socket", n.socket)
	framework.Eventually(t, 30*time.Second, "the standalone fake runtime", func() (bool, string) {
		if n.runtime.Exited() {
			t.Fatalf("the fake runtime exited:\n%s", n.runtime.Log())
		}
		_, err := fakeruntime.NewAdminClient(n.socket + ".admin").State(context.Background())
		return err == nil, fmt.Sprint(err)
	})
}

// mustBeRunning fails the test if minikubelet has exited: none of these faults may stop it.
func (n *node) mustBeRunning(t *testing.T) {
	t.Helper()
	if n.kubelet.Exited() {
		code, _ := n.kubelet.Wait(time.Second)
		t.Fatalf("minikubelet (pid %d) exited with code %d; it must survive the fault", n.kubelet.Cmd.Process.Pid, code)
	}
}

func (n *node) readyCondition() (corev1.ConditionStatus, string) {
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, fmt.Sprintf("Ready=%s reason=%s message=%q", c.Status, c.Reason, c.Message)
		}
	}
	return "", "no Ready condition"
}

func (n *node) waitReady(t *testing.T, want corev1.ConditionStatus, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, fmt.Sprintf("node %s Ready=%s", n.name, want), func() (bool, string) {
		status, msg := n.readyCondition()
		return status == want, msg
	})
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

// sandboxes lists the runtime's pod sandboxes over CRI, as the kubelet sees them (with the pod
// UID, which the admin State does not show).
func (n *node) sandboxes(t *testing.T) []*runtimeapi.PodSandbox {
	t.Helper()
	ctx := context.Background()
	c, err := remote.Dial(ctx, "unix://"+n.socket, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	resp, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetItems()
}

// metrics scrapes the kubelet API's /metrics; see scrape.
func (n *node) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	m, err := n.scrape()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scrape reads the kubelet API's /metrics with the cluster admin's client certificate (the API
// server's node proxy refuses a loopback node address, see README), trusting exactly the
// kubelet's self-signed serving certificate. It may be called from any goroutine.
func (n *node) scrape() (map[string]float64, error) {
	api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
	if err != nil {
		return nil, err
	}
	admin, err := cluster.AdminCert()
	if err != nil {
		return nil, err
	}
	code, body, err := api.TryGet("/metrics", admin)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %d %.300s", code, body)
	}
	return parseMetrics(strings.NewReader(body)), nil
}

// parseMetrics reads the samples without labels of a Prometheus text exposition.
func parseMetrics(r io.Reader) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// rssKiB is the kubelet process's resident set size, VmRSS in /proc/<pid>/status.
func (n *node) rssKiB(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.kubelet.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			return kib
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", n.kubelet.Cmd.Process.Pid)
	return 0
}

// csrCount counts the CSRs that ask for a client certificate of the node.
func csrCount(t *testing.T, nodeName string) int {
	t.Helper()
	list, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, csr := range list.Items {
		block, _ := pem.Decode(csr.Spec.Request)
		if block == nil {
			continue
		}
		if req, err := x509.ParseCertificateRequest(block.Bytes); err == nil && req.Subject.CommonName == "system:node:"+nodeName {
			n++
		}
	}
	return n
}

// namespace creates a namespace for the test and waits for its default ServiceAccount, without
// which the API server refuses pods. kube-controller-manager creates it at once — unless its
// informers are still backing off after an API server outage (TestAPIServerOutage), which takes
// up to a minute or so.
func namespace(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-faults-"}}
	ns, err := cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	})
	framework.Eventually(t, 3*time.Minute, "the default ServiceAccount of "+ns.Name, func() (bool, string) {
		_, err := cluster.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	return ns.Name
}

// boundPod is a pod already bound to the node (spec.nodeName: no scheduler involved) whose one
// container runs until stopped.
func boundPod(name, nodeName string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}}},
		},
	}
}

func createPod(t *testing.T, ns string, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := cluster.Client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// runningAndReady reports whether the pod runs with its container ready.
func runningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitPodsRunning waits until want pods of ns are Running and Ready, and returns them.
func waitPodsRunning(t *testing.T, ns string, want int, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	framework.Eventually(t, timeout, fmt.Sprintf("%d pods Running and Ready", want), func() (bool, string) {
		list, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		pods = list.Items
		ready := 0
		var notReady []string
		for i := range pods {
			if runningAndReady(&pods[i]) {
				ready++
			} else {
				notReady = append(notReady, describe(&pods[i]))
			}
		}
		return ready == want && len(pods) == want, fmt.Sprintf("%d of %d ready; not ready: %.600s", ready, len(pods), strings.Join(notReady, "; "))
	})
	return pods
}

func describe(pod *corev1.Pod) string {
	data, _ := json.Marshal(pod.Status.ContainerStatuses)
	return pod.Name + " " + string(pod.Status.Phase) + " " + string(data)
}

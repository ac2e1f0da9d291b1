package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// The API server's node proxy reaches minikubelet's /pods, /metrics, /stats/summary,
// /metrics/resource and /healthz as the API
// server's kubelet client (authenticated by x509, authorized by SubjectAccessReview), exactly as
// `kubectl get --raw /api/v1/nodes/<node>/proxy/...` does against a real node.
func TestNodeProxy(t *testing.T) {
	const name = "e2e-proxy"
	rootDir, err := os.MkdirTemp("", "mkx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	framework.StartProcess(t, minikubelet,
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", nodeIP,
		"--address", nodeIP, "--port", strconv.Itoa(framework.FreePort(t)))
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })

	ctx := context.Background()
	ns, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-proxy-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}) })
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name}, Spec: corev1.PodSpec{
		NodeName:                      name,
		AutomountServiceAccountToken:  ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sh", "-c", "alloc 200Mi; sleep 3600"}}},
	}}
	framework.Eventually(t, time.Minute, "pod web created (the namespace's service account exists)", func() (bool, string) {
		_, err := cluster.Client.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{})
		return err == nil, fmt.Sprint(err)
	})
	framework.Eventually(t, time.Minute, "pod web Running", func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods(ns.Name).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})

	node, err := cluster.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(node.Status.Addresses) == 0 || node.Status.Addresses[0].Address != nodeIP {
		t.Fatalf("node addresses %v, want InternalIP %s first", node.Status.Addresses, nodeIP)
	}

	raw := func(path string) string {
		t.Helper()
		out, err := cluster.KubectlOutput("get", "--raw", "/api/v1/nodes/"+name+"/proxy"+path)
		if err != nil {
			t.Fatalf("kubectl get --raw %s: %v\n%s", path, err, out)
		}
		return out
	}

	var pods corev1.PodList
	if err := json.Unmarshal([]byte(raw("/pods")), &pods); err != nil {
		t.Fatalf("/proxy/pods is not a PodList: %v", err)
	}
	var found bool
	for _, p := range pods.Items {
		found = found || (p.Namespace == ns.Name && p.Name == "web")
	}
	if !found {
		t.Errorf("/proxy/pods does not list %s/web: %d pods", ns.Name, len(pods.Items))
	}

	metrics := raw("/metrics")
	if !strings.Contains(metrics, "kubelet_pleg_relist_duration_seconds") {
		t.Errorf("/proxy/metrics has no kubelet_pleg_relist_duration_seconds:\n%s", firstLines(metrics, 20))
	}
	// The running-pods gauge is updated by housekeeping, so it may lag the pod by a few seconds.
	framework.Eventually(t, 30*time.Second, "/proxy/metrics counts the running pod", func() (bool, string) {
		for _, line := range strings.Split(raw("/metrics"), "\n") {
			if strings.HasPrefix(line, "kubelet_running_pods ") {
				return line == "kubelet_running_pods 1", line
			}
		}
		return false, "no kubelet_running_pods"
	})
	// `kubectl get --raw /api/v1/nodes/<node>/proxy/stats/summary`: the pod's alloc 200Mi shows.
	var summary statsapi.Summary
	if err := json.Unmarshal([]byte(raw("/stats/summary")), &summary); err != nil {
		t.Fatalf("/proxy/stats/summary is not a Summary: %v", err)
	}
	var ws uint64
	for _, p := range summary.Pods {
		if p.PodRef.Namespace == ns.Name && p.PodRef.Name == "web" && len(p.Containers) == 1 && p.Containers[0].Memory != nil {
			ws = ptr.Deref(p.Containers[0].Memory.WorkingSetBytes, 0)
		}
	}
	if summary.Node.NodeName != name || ws < 200<<20 {
		t.Errorf("/proxy/stats/summary: node %q, web's working set %d, want %s and at least 200Mi", summary.Node.NodeName, ws, name)
	}
	want := fmt.Sprintf(`container_memory_working_set_bytes{container="app",namespace="%s",pod="web"} `, ns.Name)
	if res := raw("/metrics/resource"); !strings.Contains(res, want) {
		t.Errorf("/proxy/metrics/resource has no %s:\n%s", want, firstLines(res, 30))
	}
	if got := strings.TrimSpace(raw("/healthz")); got != "ok" {
		t.Errorf("/proxy/healthz = %q, want ok", got)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

package pods

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// kubeletAPI GETs path from the node's kubelet API as the holder of cert (the serving certificate
// is self-signed: trust exactly it).
func kubeletAPI(t *testing.T, n *node, cert tls.Certificate, path string) (int, string) {
	t.Helper()
	api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
	if err != nil {
		t.Fatal(err)
	}
	return api.Get(t, path, cert)
}

func adminCert(t *testing.T) tls.Certificate {
	t.Helper()
	cert, err := cluster.AdminCert()
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// A container whose program does `alloc 200Mi` shows a working set of at least 200Mi in
// /stats/summary (nodes/stats) and in /metrics/resource (nodes/metrics, with sample timestamps
// as metrics-server needs); the node's memory.available is its capacity less its working set; a
// user without RBAC gets 403 (upstream: pkg/kubelet/server/stats, resource_metrics.go, auth.go).
func TestStatsSummaryAndResourceMetrics(t *testing.T) {
	n := startNode(t, "e2e-pods-stats", "--node-capacity", "memory=4Gi,ephemeral-storage=20Gi")
	ns := namespace(t)
	runningPod(t, ns, "hog", podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "alloc 200Mi; burn 250m; sleep infinity"))
	admin := adminCert(t)

	var summary statsapi.Summary
	var hog *statsapi.PodStats
	framework.Eventually(t, 30*time.Second, "hog in /stats/summary", func() (bool, string) {
		code, body := kubeletAPI(t, n, admin, "/stats/summary")
		if code != http.StatusOK {
			return false, fmt.Sprintf("%d %.300s", code, body)
		}
		summary = statsapi.Summary{}
		if err := json.Unmarshal([]byte(body), &summary); err != nil {
			t.Fatalf("/stats/summary is not a Summary: %v", err)
		}
		for i, p := range summary.Pods {
			if p.PodRef.Namespace == ns && p.PodRef.Name == "hog" {
				hog = &summary.Pods[i]
				return len(hog.Containers) == 1, fmt.Sprintf("%d containers", len(hog.Containers))
			}
		}
		return false, fmt.Sprintf("%d pods, none is %s/hog", len(summary.Pods), ns)
	})
	app := hog.Containers[0]
	if ws := ptr.Deref(app.Memory.WorkingSetBytes, 0); app.Name != "app" || ws < 200<<20 {
		t.Errorf("container %q working set %d, want app with at least 200Mi", app.Name, ws)
	}
	if nc := ptr.Deref(app.CPU.UsageNanoCores, 0); nc < 250_000_000 {
		t.Errorf("container usageNanoCores %d, want at least 250m (burn 250m)", nc)
	}
	if ws := ptr.Deref(hog.Memory.WorkingSetBytes, 0); ws < 200<<20 {
		t.Errorf("pod working set %d, want at least 200Mi", ws)
	}
	node := summary.Node
	capacity := uint64(4 << 30)
	if node.NodeName != n.name || node.Memory == nil || ptr.Deref(node.Memory.WorkingSetBytes, 0) < 200<<20 ||
		ptr.Deref(node.Memory.AvailableBytes, 0) != capacity-ptr.Deref(node.Memory.WorkingSetBytes, 0) {
		t.Errorf("node %q memory %+v: want a working set ≥ 200Mi and available = 4Gi − working set", node.NodeName, node.Memory)
	}
	if node.Fs == nil || ptr.Deref(node.Fs.CapacityBytes, 0) != uint64(20<<30) || node.Rlimit == nil || node.Rlimit.MaxPID == nil {
		t.Errorf("node fs %+v rlimit %+v: want the 20Gi ephemeral-storage capacity and a MaxPID", node.Fs, node.Rlimit)
	}

	code, body := kubeletAPI(t, n, admin, "/stats/summary?only_cpu_and_memory=true")
	var small statsapi.Summary
	if err := json.Unmarshal([]byte(body), &small); code != http.StatusOK || err != nil || small.Node.Fs != nil || small.Node.Memory == nil {
		t.Errorf("only_cpu_and_memory: %d %v, node fs %v memory %v: want memory and no fs", code, err, small.Node.Fs, small.Node.Memory)
	}

	code, body = kubeletAPI(t, n, admin, "/metrics/resource")
	want := fmt.Sprintf(`container_memory_working_set_bytes{container="app",namespace="%s",pod="hog"} `, ns)
	line := lastLine(body, want)
	if code != http.StatusOK || line == "" {
		t.Fatalf("/metrics/resource: %d, no %s line:\n%.1000s", code, want, body)
	}
	f := strings.Fields(line) // name{labels} value timestamp-in-ms
	if len(f) != 3 {
		t.Fatalf("%q: want a value and a sample timestamp", line)
	}
	value, _ := strconv.ParseFloat(f[1], 64)
	ms, _ := strconv.ParseInt(f[2], 10, 64)
	if value < 200<<20 || time.Since(time.UnixMilli(ms)).Abs() > time.Minute {
		t.Errorf("%q: want a value ≥ 200Mi and a current sample timestamp", line)
	}
	for _, name := range []string{"node_cpu_usage_seconds_total ", "node_memory_working_set_bytes ", "pod_memory_working_set_bytes{", "container_cpu_usage_seconds_total{", "container_start_time_seconds{", "resource_scrape_error 0"} {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("/metrics/resource has no %s", name)
		}
	}

	bob := clientCertFor(t, "bob")
	for _, path := range []string{"/stats/summary", "/metrics/resource"} {
		if code, body := kubeletAPI(t, n, bob, path); code != http.StatusForbidden || !strings.Contains(body, "user=bob") {
			t.Errorf("%s as bob without RBAC: %d %.200s, want 403", path, code, body)
		}
	}
}

// A container over its memory limit is OOM-killed on the fake node as on a real one: the
// container terminates with reason OOMKilled and exit code 137 in the pod's status.
func TestAllocOverMemoryLimitIsOOMKilled(t *testing.T) {
	n := startNode(t, "e2e-pods-oom")
	ns := namespace(t)
	spec := podSpec(n.name, corev1.RestartPolicyNever, "sh", "-c", "alloc 100Mi; sleep infinity")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
	createPod(t, ns, "oom", spec)
	term := terminated(t, ns, "oom")
	if term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Errorf("terminated %q exit %d, want OOMKilled 137", term.Reason, term.ExitCode)
	}
}

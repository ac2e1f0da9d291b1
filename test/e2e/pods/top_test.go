package pods

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// kubectl top node and kubectl top pod through a real metrics-server (sigs.k8s.io/metrics-server
// v0.8.0, registered as the v1beta1.metrics.k8s.io APIService on the local control plane): it
// scrapes the node's /metrics/resource every 10 s over TLS verified against the cluster CA (the
// node's CSR-issued serving certificate), as the user system:metrics-server, whom the kubelet
// authorizes by SubjectAccessReview (nodes/metrics); kubectl reads the figures through the
// API server's aggregation layer. Anyone else is still refused by the kubelet.
func TestKubectlTop(t *testing.T) {
	cluster.StartMetricsServer(t, 10*time.Second)
	n := startNode(t, "e2e-pods-top", "--rotate-server-certificates")
	cluster.ApproveServingCSR(t, n.name)
	ns := namespace(t)
	// The fake runtime's programs use CPU and memory on paper: 300m and 64Mi, on top of a base.
	runningPod(t, ns, "hog", podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "alloc 64Mi; burn 300m; sleep infinity"))

	// NAME CPU(cores) CPU(%) MEMORY(bytes) MEMORY(%); CPU needs two scrapes (a rate), so it can
	// take two resolutions and a bit.
	cpu, mem := `([0-9]+)m`, `([0-9]+)Mi`
	nodeLine := regexp.MustCompile(`(?m)^` + n.name + `\s+` + cpu + `\s+[0-9]+%\s+` + mem + `\s+[0-9]+%\s*$`)
	framework.Eventually(t, 2*time.Minute, "kubectl top node to show "+n.name, func() (bool, string) {
		out, code := kubectl(t, "", "top", "node", n.name, "--no-headers")
		return code == 0 && nodeLine.MatchString(out), lastLines(out, cluster.MetricsServerLog())
	})
	// NAME CPU(cores) MEMORY(bytes): the pod's figures are what its program uses.
	podLine := regexp.MustCompile(`(?m)^hog\s+` + cpu + `\s+` + mem + `\s*$`)
	framework.Eventually(t, 2*time.Minute, "kubectl top pod to show hog with its 300m and 64Mi", func() (bool, string) {
		out, code := kubectl(t, "", "top", "pod", "-n", ns, "--no-headers")
		m := podLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			return false, lastLines(out, cluster.MetricsServerLog())
		}
		millicores, _ := strconv.Atoi(m[1])
		mebibytes, _ := strconv.Atoi(m[2])
		// Every running fake container also has a small base: 1m–50m CPU, 4–63 MiB.
		return millicores >= 280 && millicores <= 400 && mebibytes >= 64 && mebibytes <= 128, "kubectl: " + out
	})
	out, _ := kubectl(t, "", "top", "pod", "-n", ns, "--containers", "--no-headers")
	nodeOut, _ := kubectl(t, "", "top", "node", n.name)
	t.Logf("kubectl top node %s:\n%skubectl top pod -n %s --containers:\n%s", n.name, nodeOut, ns, out)
	if !regexp.MustCompile(`(?m)^hog\s+app\s+` + cpu + `\s+` + mem + `\s*$`).MatchString(out) {
		t.Errorf("kubectl top pod --containers: want a line for container app of pod hog, got:\n%s", out)
	}

	// What metrics-server may read, the kubelet still refuses to others: no credentials → 401, a
	// user RBAC does not allow nodes/metrics → 403.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cluster.RestConfig.CAData)
	api := framework.KubeletAPI{Port: n.port, Roots: pool}
	if code, body := api.Get(t, "/metrics/resource"); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics/resource without credentials: %d %.200s, want 401", code, body)
	}
	if code, body := api.Get(t, "/metrics/resource", clientCertFor(t, "carol")); code != http.StatusForbidden || !strings.Contains(body, "user=carol") ||
		!strings.Contains(body, "metrics") {
		t.Errorf("GET /metrics/resource as user carol without RBAC: %d %.200s, want 403 naming nodes/metrics", code, body)
	}
}

// lastLines is kubectl's output and the tail of metrics-server's log, for a failure message.
func lastLines(out, log string) string {
	lines := strings.Split(log, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return fmt.Sprintf("kubectl: %s; metrics-server log:\n%s", strings.TrimSpace(out), strings.Join(lines, "\n"))
}

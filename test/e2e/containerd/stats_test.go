package containerd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// statsSummary GETs the node's /stats/summary as the cluster admin (trusting exactly the node's
// self-signed serving certificate).
func statsSummary(t *testing.T, n *node) (statsapi.Summary, error) {
	t.Helper()
	api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := cluster.AdminCert()
	if err != nil {
		t.Fatal(err)
	}
	var s statsapi.Summary
	code, body, err := api.TryGet("/stats/summary", admin)
	if err != nil {
		return s, err
	}
	if code != http.StatusOK {
		return s, fmt.Errorf("%d %.300s", code, body)
	}
	return s, json.Unmarshal([]byte(body), &s)
}

// expectContainerStats waits until /stats/summary shows the running container of ns/pod with a
// non-zero working set and CPU time (real numbers from containerd's CRI stats), and the node's
// figures from the machine.
func expectContainerStats(t *testing.T, n *node, ns, pod string) {
	t.Helper()
	framework.Eventually(t, time.Minute, ns+"/"+pod+" in /stats/summary", func() (bool, string) {
		s, err := statsSummary(t, n)
		if err != nil {
			return false, err.Error()
		}
		if s.Node.Memory == nil || ptr.Deref(s.Node.Memory.WorkingSetBytes, 0) == 0 || s.Node.Fs == nil || ptr.Deref(s.Node.Fs.CapacityBytes, 0) == 0 {
			return false, fmt.Sprintf("node memory %+v fs %+v", s.Node.Memory, s.Node.Fs)
		}
		for _, p := range s.Pods {
			if p.PodRef.Namespace != ns || p.PodRef.Name != pod || len(p.Containers) != 1 {
				continue
			}
			c := p.Containers[0]
			ws, cpu := ptr.Deref(c.Memory.WorkingSetBytes, 0), ptr.Deref(c.CPU.UsageCoreNanoSeconds, 0)
			return ws > 0 && cpu > 0, fmt.Sprintf("container %s working set %d, CPU time %d ns", c.Name, ws, cpu)
		}
		return false, fmt.Sprintf("%d pods, not %s/%s with one container", len(s.Pods), ns, pod)
	})
}

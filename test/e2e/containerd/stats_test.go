package containerd

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// statsSummary GETs the node's /stats/summary as the cluster admin (trusting exactly the node's
// self-signed serving certificate).
func statsSummary(t *testing.T, n *node) (statsapi.Summary, error) {
	t.Helper()
	servingCert, err := os.ReadFile(filepath.Join(n.rootDir, "pki", "kubelet.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(servingCert)
	admin, err := clientcmd.BuildConfigFromFlags("", cluster.AdminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(admin.CertData, admin.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1"}}}
	var s statsapi.Summary
	resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/stats/summary", n.port))
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%d %.300s", resp.StatusCode, body)
	}
	return s, json.Unmarshal(body, &s)
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

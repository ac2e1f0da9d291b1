// Package proxy tests the API server's node proxy (`kubectl get --raw
// /api/v1/nodes/<node>/proxy/...`) against minikubelet's :10250. The API server refuses to proxy
// to loopback addresses, so these tests run in a private network namespace where the node has a
// non-loopback address of its own (see framework.InPrivateNetwork).
package proxy

import (
	"os"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// nodeIP is the node's InternalIP inside the test namespace: not loopback, reachable only there.
const nodeIP = "10.213.0.1"

var (
	cluster     *framework.Cluster
	minikubelet string
)

func TestMain(m *testing.M) {
	if done, code := framework.InPrivateNetwork(nodeIP); done {
		os.Exit(code)
	}
	os.Exit(framework.MainWithMinikubelet(m.Run, framework.Options{}, &cluster, &minikubelet))
}

// Package node holds the e2e tests of the control plane and the node agent (TLS bootstrap,
// registration, status, Lease) against the real local control plane.
package node

import (
	"os"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string // the binary under test
)

func TestMain(m *testing.M) {
	os.Exit(framework.MainWithMinikubelet(m.Run, framework.Options{}, &cluster, &minikubelet))
}

// Package node holds the e2e tests of the control plane and the node agent (TLS bootstrap,
// registration, status, Lease) against the real local control plane.
package node

import (
	"fmt"
	"os"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string // the binary under test
)

func TestMain(m *testing.M) {
	binDir, err := os.MkdirTemp("", "minikubelet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(binDir)
	if minikubelet, err = framework.BuildMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := framework.Main(m.Run, framework.Options{}, &cluster)
	os.RemoveAll(binDir)
	os.Exit(code)
}

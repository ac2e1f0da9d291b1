// Package doctor holds the e2e tests of `minikubelet doctor` against the real local control
// plane: a working setup is all OK, and each broken part (CA, token, RBAC, runtime) is named with
// its fix and makes doctor exit 1.
package doctor

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

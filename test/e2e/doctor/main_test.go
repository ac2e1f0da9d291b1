// Package doctor holds the e2e tests of `minikubelet doctor` against the real local control
// plane: a working setup is all OK, and each broken part (CA, token, RBAC, runtime) is named with
// its fix and makes doctor exit 1.
package doctor

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

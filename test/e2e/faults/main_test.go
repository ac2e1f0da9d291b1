package faults

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

package faults

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
	if minikubelet, err = framework.BuildMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := framework.Main(m.Run, framework.Options{}, &cluster)
	os.RemoveAll(binDir)
	os.Exit(code)
}

package cri_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// minikubelet is the binary under test: `minikubelet fake-runtime serve` and its fault verbs.
var minikubelet string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "minikubelet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if minikubelet, err = framework.BuildMinikubelet(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

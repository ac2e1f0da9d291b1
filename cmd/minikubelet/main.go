// Command minikubelet is a small, readable kubelet. main only hands the arguments to the app and
// exits with its code; everything else lives in package app so it can be tested.
// Upstream counterpart: cmd/kubelet/kubelet.go.
package main

import (
	"os"

	"github.com/minikubelet/minikubelet/cmd/minikubelet/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Stdout, os.Stderr))
}

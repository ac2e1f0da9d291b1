// Command pause is the process of our local pause image, the one every pod sandbox runs: it holds
// the sandbox's namespaces open and does nothing else. Like upstream's pause.c
// (kubernetes/build/pause/linux/pause.c) it exits 0 on SIGINT or SIGTERM; unlike it, it leaves
// reaping orphans to the runtime (our pods do not share a PID namespace unless asked to).
//
// It is built with CGO_ENABLED=0, so it is one static file that runs in an empty image:
//
//	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o pause ./hack/containerd/pause
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}

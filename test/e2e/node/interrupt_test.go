package node

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// SIGTERM while minikubelet is still starting — here stuck in the CRI handshake with a runtime
// socket that accepts connections and never answers — is a clean shutdown: exit 0, no error
// line, as SIGTERM is once it runs.
func TestSIGTERMWhileStartingIsACleanExit(t *testing.T) {
	const name = "e2e-interrupted"
	t.Cleanup(func() { deleteNodeArtifacts(t, name) })
	socket := filepath.Join(t.TempDir(), "silent.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan struct{}, 1)
	go func() { // accept, never speak
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					_ = c.Close()
				}
				return
			}
			held = append(held, c)
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	kubelet := framework.StartProcess(t, minikubelet, kubeletArgs(t, name, t.TempDir(),
		"--container-runtime-endpoint", "unix://"+socket, "--runtime-request-timeout", "5m")...)
	framework.Eventually(t, time.Minute, "bootstrap done, CRI handshake under way", func() (bool, string) {
		return strings.Contains(kubelet.Log(), "Wrote the kubeconfig"), "no \"Wrote the kubeconfig\" yet"
	})
	select { // minikubelet has connected: it is in the handshake, which cannot finish
	case <-accepted:
	case <-time.After(time.Minute):
		t.Fatalf("minikubelet never connected to the runtime socket:\n%s", kubelet.Log())
	}
	if err := kubelet.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := kubelet.Wait(30 * time.Second)
	if err != nil || code != 0 {
		t.Fatalf("after SIGTERM while starting: exit %d, %v; want 0\n%s", code, err, kubelet.Log())
	}
	if log := kubelet.Log(); !strings.Contains(log, "Stopped while starting") || strings.Contains(log, "minikubelet: ") {
		t.Errorf("want the interruption logged as a clean stop, and no error line:\n%s", log)
	}
}

package doctor

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/fakeruntime"
)

// serveFake serves the fake runtime on socket until the test ends.
func serveFake(t *testing.T, socket string) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	rt, err := fakeruntime.New(fakeruntime.Config{Socket: socket})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- rt.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	select {
	case <-rt.Ready():
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	}
}

// deadSocket leaves a socket file nobody listens on, as a crashed runtime does.
func deadSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}

// The kubelet's first CRI call is Version (cri-client's handshake): a runtime that answers
// passes; a dead or missing socket fails with how to start one.
func TestCheckRuntime(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := shortTempDir(t)
	live := filepath.Join(dir, "live.sock")
	serveFake(t, live)
	dead := filepath.Join(dir, "dead.sock")
	deadSocket(t, dead)

	got := checkRuntime(ctx, "unix://"+live, dir, 5*time.Second)
	if got.Status != OK || !strings.Contains(got.Message, fakeruntime.RuntimeName) || !strings.Contains(got.Message, "CRI v1") {
		t.Errorf("live runtime: %+v; want OK naming %s and CRI v1", got, fakeruntime.RuntimeName)
	}
	for name, endpoint := range map[string]string{"dead socket": "unix://" + dead, "no socket": filepath.Join(dir, "none.sock")} {
		got := checkRuntime(ctx, endpoint, dir, 5*time.Second)
		if got.Status != Fail || !strings.Contains(got.Fix, "minikubelet fake-runtime serve --socket "+strings.TrimPrefix(endpoint, "unix://")) {
			t.Errorf("%s: %+v; want FAIL with how to start the runtime", name, got)
		}
	}
}

// Without --container-runtime-endpoint minikubelet serves the fake runtime on
// <root-dir>/fake-runtime.sock: that must fit a unix socket path and not be served already.
func TestCheckBuiltinRuntime(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	root := shortTempDir(t)
	if got := checkRuntime(ctx, "", root, time.Second); got.Status != OK || !strings.Contains(got.Message, filepath.Join(root, "fake-runtime.sock")) {
		t.Errorf("free socket path: %+v; want OK naming the socket", got)
	}
	serveFake(t, filepath.Join(root, "fake-runtime.sock"))
	if got := checkRuntime(ctx, "", root, time.Second); got.Status != Fail || !strings.Contains(got.Message, "another process already serves") {
		t.Errorf("socket already served: %+v; want FAIL", got)
	}
	long := "/" + strings.Repeat("d", 100)
	if got := checkRuntime(ctx, "", long, time.Second); got.Status != Fail || !strings.Contains(got.Fix, "shorter --root-dir") {
		t.Errorf("long root dir: %+v; want FAIL asking for a shorter --root-dir", got)
	}
}

package remote_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// shortTempDir keeps socket paths under the 107-byte unix limit.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// serveFake serves the fake runtime on a temporary socket until the test ends.
func serveFake(t *testing.T) (*fakeruntime.Runtime, context.Context) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	rt, err := fakeruntime.New(fakeruntime.Config{Socket: filepath.Join(shortTempDir(t), "cri.sock")})
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
	return rt, ctx
}

func TestDialFakeRuntime(t *testing.T) {
	rt, ctx := serveFake(t)
	tests := []struct{ name, endpoint string }{
		{"unix URL", rt.Endpoint()},
		{"bare path", strings.TrimPrefix(rt.Endpoint(), "unix://")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := remote.Dial(ctx, tc.endpoint, 10*time.Second)
			if err != nil {
				t.Fatalf("Dial(%q): %v", tc.endpoint, err)
			}
			defer func() { _ = c.Close() }()
			if c.Version().GetRuntimeName() != fakeruntime.RuntimeName {
				t.Errorf("handshake version = %v", c.Version())
			}
			if _, err := c.Image.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}}); err != nil {
				t.Errorf("PullImage through the client: %v", err)
			}
			if _, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{}); err != nil {
				t.Errorf("ListContainers through the client: %v", err)
			}
		})
	}
}

// TestPerCallTimeout pins that every unary call is bounded, like --runtime-request-timeout.
func TestPerCallTimeout(t *testing.T) {
	rt, ctx := serveFake(t)
	c, err := remote.Dial(ctx, rt.Endpoint(), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if err := rt.Inject("latency", fakeruntime.FaultArgs{Method: "ListPodSandbox", Duration: "1h"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") {
		t.Errorf("a call slower than the timeout returned %v, want DeadlineExceeded", err)
	}
}

func TestDialErrors(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := shortTempDir(t)

	// A gRPC server that is not a CRI runtime.
	notCRI := filepath.Join(dir, "not-cri.sock")
	l, err := net.Listen("unix", notCRI)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	// A socket file nobody serves.
	dead := filepath.Join(dir, "dead.sock")
	dl, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	dl.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = dl.Close()

	tests := []struct{ name, endpoint, want string }{
		{"missing socket", "unix://" + filepath.Join(dir, "missing.sock"), "cannot reach the container runtime at"},
		{"dead socket", "unix://" + dead, "cannot reach the container runtime at"},
		{"not a CRI server", "unix://" + notCRI, "does not speak CRI v1"},
		{"tcp endpoint", "tcp://127.0.0.1:1234", "only unix sockets are supported"},
		{"empty endpoint", "", "CRI endpoint is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := remote.Dial(ctx, tc.endpoint, 5*time.Second)
			if err == nil {
				_ = c.Close()
				t.Fatalf("Dial(%q) succeeded", tc.endpoint)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial(%q) = %v, want an error containing %q", tc.endpoint, err, tc.want)
			}
		})
	}
}

// The kubelet keeps one connection for its life, so it must outlive a runtime restart (as
// containerd's, in test/e2e/containerd): calls fail while the runtime is away, and succeed again
// once a runtime serves the same socket — without a new Dial.
func TestReconnectsAfterRuntimeRestart(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	socket := filepath.Join(shortTempDir(t), "cri.sock")
	serve := func() (stop func()) {
		rt, err := fakeruntime.New(fakeruntime.Config{Socket: socket})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctx)
		served := make(chan error, 1)
		go func() { served <- rt.Serve(ctx) }()
		select {
		case <-rt.Ready():
		case err := <-served:
			t.Fatalf("Serve: %v", err)
		}
		return func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
		}
	}
	stop := serve()
	c, err := remote.Dial(ctx, "unix://"+socket, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{}); err != nil {
		t.Fatalf("Status before the restart: %v", err)
	}

	stop()
	if _, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{}); status.Code(err) != codes.Unavailable {
		t.Errorf("Status with the runtime away = %v, want Unavailable", err)
	}

	stop = serve()
	defer stop()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("the client did not reconnect to the restarted runtime: %v", err)
	}
}

package fakeruntime

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

// testEnv is a fake runtime served on a temporary socket, a gRPC connection to it and its clock.
type testEnv struct {
	rt     *Runtime
	rs     runtimeapi.RuntimeServiceClient
	is     runtimeapi.ImageServiceClient
	clock  *testingclock.FakeClock
	dir    string // temporary directory holding the sockets and logs
	ctx    context.Context
	socket string
	// stop cancels Serve and returns what it returned; the test's cleanup calls it too.
	stop func() error
}

// t0 is the fake clock's start: timestamps in tests are exact.
func t0() time.Time { return time.Date(2016, 10, 6, 0, 17, 9, 669794202, time.UTC) }

// poll waits until cond holds: work that a fake clock step or a gRPC stream starts runs on other
// goroutines.
func poll(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("condition never held: %v", err)
	}
}

// newTestEnv serves a fake runtime (with cfg's optional fields) over a real unix socket and stops
// it when the test ends, checking that Serve returned nil and removed its sockets.
func newTestEnv(t *testing.T, mutate func(*Config)) *testEnv {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	// t.TempDir can exceed the 107-byte unix socket limit; /tmp/criNNN cannot.
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	fc := testingclock.NewFakeClock(t0())
	cfg := Config{Socket: filepath.Join(dir, "cri.sock"), Clock: fc, LogRoot: filepath.Join(dir, "logs")}
	if mutate != nil {
		mutate(&cfg)
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- rt.Serve(ctx) }()
	select {
	case <-rt.Ready():
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	}
	conn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	var stopOnce sync.Once
	var serveErr error
	stop := func() error {
		stopOnce.Do(func() {
			cancel()
			serveErr = <-served
		})
		return serveErr
	}
	t.Cleanup(func() {
		_ = conn.Close()
		if err := stop(); err != nil {
			t.Errorf("Serve returned %v, want nil after cancel", err)
		}
		for _, p := range []string{cfg.Socket, rt.AdminSocket()} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("socket %s still exists after Serve returned (stat: %v)", p, err)
			}
		}
	})
	return &testEnv{
		rt: rt, rs: runtimeapi.NewRuntimeServiceClient(conn), is: runtimeapi.NewImageServiceClient(conn),
		clock: fc, dir: dir, ctx: ctx, socket: cfg.Socket, stop: stop,
	}
}

func sandboxConfig(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: "uid-" + name},
		Labels:       map[string]string{"app": name},
		Annotations:  map[string]string{"note": "kept as given"},
		LogDirectory: "", // LogRoot applies
	}
}

// runSandbox starts a sandbox and returns its ID.
func (e *testEnv) runSandbox(t *testing.T, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	resp, err := e.rs.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	return resp.GetPodSandboxId()
}

func (e *testEnv) pull(t *testing.T, ref string) string {
	t.Helper()
	resp, err := e.is.PullImage(e.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		t.Fatalf("PullImage %s: %v", ref, err)
	}
	return resp.GetImageRef()
}

func containerConfig(name string, command ...string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: name},
		Image:       &runtimeapi.ImageSpec{Image: "busybox"},
		Command:     command,
		Labels:      map[string]string{"container": name},
		Annotations: map[string]string{"a": "b"},
		LogPath:     name + "/0.log",
	}
}

// createContainer pulls busybox and creates a container in sandbox.
func (e *testEnv) createContainer(t *testing.T, sandboxID string, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	e.pull(t, cfg.GetImage().GetImage())
	resp, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: cfg})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	return resp.GetContainerId()
}

func (e *testEnv) startContainer(t *testing.T, id string) {
	t.Helper()
	if _, err := e.rs.StartContainer(e.ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
}

func (e *testEnv) containerStatus(t *testing.T, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := e.rs.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatalf("ContainerStatus: %v", err)
	}
	return resp.GetStatus()
}

// waitExited waits until a container has exited: after a fake clock step, programs resume on
// another goroutine.
func (e *testEnv) waitExited(t *testing.T, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	var st *runtimeapi.ContainerStatus
	err := wait.PollUntilContextTimeout(e.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		st = e.containerStatus(t, id)
		return st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED, nil
	})
	if err != nil {
		t.Fatalf("container %s did not exit: state %v", id, st.GetState())
	}
	return st
}

// wantCode fails the test unless err carries the gRPC code want.
func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("got code %v (%v), want %v", got, err, want)
	}
}

// subscriberCount is for tests that must know an event stream is listening before they act.
func (r *Runtime) subscriberCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

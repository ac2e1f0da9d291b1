package fakeruntime

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestFaultInjectionThroughAdminAPI drives every fault through AdminClient, as the
// `minikubelet fake-runtime` CLI will, and checks what a CRI client then sees.
func TestFaultInjectionThroughAdminAPI(t *testing.T) {
	e := newTestEnv(t, nil)
	admin := NewAdminClient(e.rt.AdminSocket())
	sb := e.runSandbox(t, sandboxConfig("pod"))
	id := e.createContainer(t, sb, containerConfig("app", "sleep", "infinity"))

	t.Run("kill a container that is not running", func(t *testing.T) {
		err := admin.KillContainer(e.ctx, id, 1)
		if err == nil || !strings.Contains(err.Error(), "HTTP 409") {
			t.Errorf("KillContainer of a CREATED container = %v, want HTTP 409", err)
		}
	})
	t.Run("kill an unknown container", func(t *testing.T) {
		err := admin.KillContainer(e.ctx, "nope", 1)
		if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
			t.Errorf("KillContainer of an unknown container = %v, want HTTP 404", err)
		}
	})
	t.Run("kill a running container", func(t *testing.T) {
		e.startContainer(t, id)
		if err := admin.KillContainer(e.ctx, id[:12], 137); err != nil {
			t.Fatal(err)
		}
		st := e.containerStatus(t, id)
		if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || st.GetExitCode() != 137 || st.GetMessage() != "killed by fault injection" {
			t.Errorf("after kill: %v", st)
		}
	})
	t.Run("sandbox not ready", func(t *testing.T) {
		if err := admin.Inject(e.ctx, "sandbox-not-ready", FaultArgs{ID: sb}); err != nil {
			t.Fatal(err)
		}
		resp, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb})
		if err != nil || resp.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Errorf("after sandbox-not-ready: %v, %v", resp.GetStatus().GetState(), err)
		}
	})
	t.Run("fail next pulls", func(t *testing.T) {
		if err := admin.Inject(e.ctx, "fail-pulls", FaultArgs{Image: "nginx", Count: 2, Message: "registry down"}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			_, err := e.is.PullImage(e.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "docker.io/library/nginx:latest"}})
			if err == nil || !strings.Contains(err.Error(), "registry down") {
				t.Errorf("pull %d = %v, want the injected failure", i, err)
			}
		}
		e.pull(t, "nginx") // the third pull succeeds
	})
	t.Run("runtime not ready", func(t *testing.T) {
		if err := admin.Inject(e.ctx, "runtime-not-ready", FaultArgs{Reason: "Broken", Message: "for the lab"}); err != nil {
			t.Fatal(err)
		}
		st, err := e.rs.Status(e.ctx, &runtimeapi.StatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		c := st.GetStatus().GetConditions()[0]
		if c.GetType() != runtimeapi.RuntimeReady || c.GetStatus() || c.GetReason() != "Broken" || c.GetMessage() != "for the lab" {
			t.Errorf("RuntimeReady = %v, want false Broken", c)
		}
		if err := admin.Inject(e.ctx, "runtime-ready", FaultArgs{}); err != nil {
			t.Fatal(err)
		}
		st, _ = e.rs.Status(e.ctx, &runtimeapi.StatusRequest{})
		if !st.GetStatus().GetConditions()[0].GetStatus() {
			t.Error("RuntimeReady still false after runtime-ready")
		}
	})
	t.Run("latency on the clock", func(t *testing.T) {
		if err := admin.Inject(e.ctx, "latency", FaultArgs{Method: "ListContainers", Duration: "3s"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := e.rs.ListContainers(e.ctx, &runtimeapi.ListContainersRequest{})
			done <- err
		}()
		waitForWaiters(t, e)
		select {
		case err := <-done:
			t.Fatalf("ListContainers returned before the latency passed: %v", err)
		default:
		}
		e.clock.Step(3 * time.Second)
		if err := <-done; err != nil {
			t.Errorf("delayed ListContainers: %v", err)
		}
		if err := admin.Inject(e.ctx, "latency", FaultArgs{Method: "ListContainers", Duration: "0s"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rs.ListContainers(e.ctx, &runtimeapi.ListContainersRequest{}); err != nil {
			t.Errorf("ListContainers after removing the latency: %v", err)
		}
	})
	t.Run("events off, as containerd 1.6", func(t *testing.T) {
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		open, err := e.rs.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, func() bool { return e.rt.subscriberCount() == 1 })
		if err := admin.Inject(e.ctx, "events-off", FaultArgs{}); err != nil {
			t.Fatal(err)
		}
		// The open stream ends, and a new one is refused, both with Unimplemented.
		if _, err := open.Recv(); status.Code(err) != codes.Unimplemented {
			t.Errorf("open stream after events-off: Recv = %v, want Unimplemented", err)
		}
		refused, err := e.rs.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := refused.Recv(); status.Code(err) != codes.Unimplemented {
			t.Errorf("new stream under events-off: Recv = %v, want Unimplemented", err)
		}
		if err := admin.Inject(e.ctx, "events-on", FaultArgs{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rs.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{}); err != nil {
			t.Fatal(err)
		}
		poll(t, ctx, func() bool { return e.rt.subscriberCount() == 1 }) // streaming again
	})
	t.Run("state", func(t *testing.T) {
		st, err := admin.State(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Sandboxes) != 1 || st.Sandboxes[0].State != "SANDBOX_NOTREADY" || len(st.Containers) != 1 || st.Containers[0].ExitCode != 137 {
			t.Errorf("State = %+v", st)
		}
	})
	t.Run("bad request", func(t *testing.T) {
		err := admin.Inject(e.ctx, "latency", FaultArgs{Duration: "1s"})
		if err == nil || !strings.Contains(err.Error(), "HTTP 400") {
			t.Errorf("latency without a method = %v, want HTTP 400", err)
		}
	})
}

func TestAdminClientWithoutRuntime(t *testing.T) {
	err := NewAdminClient("/nonexistent/fake.sock.admin").Inject(context.Background(), "runtime-ready", FaultArgs{})
	if err == nil || !strings.Contains(err.Error(), "is the fake runtime running?") {
		t.Errorf("got %v, want advice that the runtime is not running", err)
	}
}

// FuzzCreateContainer feeds arbitrary container configs and IDs to the request handlers and
// checks that they never panic and always answer with a gRPC status.
func FuzzCreateContainer(f *testing.F) {
	f.Add("pod", "app", "busybox", "sh", "-c", "echo hi; sleep 5; exit 2", uint32(0), "app/0.log", "")
	f.Add("", "", "", "", "", "", uint32(7), "", "ffff")
	f.Add("p", "c", "busybox@sha256:x", "sleep", "1e400", "", uint32(1), "/abs/../x.log", "0")
	f.Add("p", "c", "localhost:5000/a", "exit", "-1", ";;&&", uint32(4294967295), "../../x", "a")
	f.Fuzz(func(t *testing.T, podName, name, img, cmd, arg1, arg2 string, attempt uint32, logPath, idPrefix string) {
		dir := t.TempDir()
		r, err := New(Config{Socket: "/tmp/fuzz-unused.sock", Clock: nil, LogRoot: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer r.shutdown()
		ctx := context.Background()
		check := func(what string, err error) {
			if err == nil {
				return
			}
			if _, ok := status.FromError(err); !ok {
				t.Fatalf("%s returned a non-gRPC error: %v", what, err)
			}
		}
		_, err = r.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: img}})
		check("PullImage", err)
		sb, err := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
			Metadata:     &runtimeapi.PodSandboxMetadata{Name: podName, Namespace: "ns", Uid: podName, Attempt: attempt},
			LogDirectory: dir,
		}})
		check("RunPodSandbox", err)
		sandboxID := sb.GetPodSandboxId() + idPrefix
		cc, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
			Image:    &runtimeapi.ImageSpec{Image: img},
			Command:  []string{cmd},
			Args:     []string{arg1, arg2},
			LogPath:  logPath,
		}})
		check("CreateContainer", err)
		id := cc.GetContainerId()
		if id == "" {
			id = idPrefix
		}
		_, err = r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
		check("StartContainer", err)
		// A cancelled context ends sleeps at once, so the fuzzer never waits on the real clock.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err = r.ExecSync(cancelled, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{cmd, arg1, arg2}, Timeout: 1})
		check("ExecSync", err)
		_, err = r.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
		check("ContainerStatus", err)
		_, err = r.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: idPrefix, PodSandboxId: sandboxID}})
		check("ListContainers", err)
		_, err = r.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id})
		check("StopContainer", err)
		_, err = r.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandboxID})
		check("RemovePodSandbox", err)
		check("kill-container", r.Inject("kill-container", FaultArgs{ID: id, ExitCode: 1}))
		check("sandbox-not-ready", r.Inject("sandbox-not-ready", FaultArgs{ID: sandboxID}))
	})
}

// TestFaultsTable checks each entry of Faults() against what its users need of it: the admin API
// routes by Path (unique), the CLI by name (unique) and fills Use's positional words from Args,
// and every fault applies and says what it did.
func TestFaultsTable(t *testing.T) {
	want := []struct{ name, path string }{
		{"kill-container", "/kill-container"},
		{"sandbox-not-ready", "/sandbox-not-ready"},
		{"fail-pulls", "/fail-next-pulls"},
		{"latency", "/latency"},
		{"runtime-not-ready", "/runtime-not-ready"},
		{"runtime-ready", "/runtime-ready"},
		{"events-off", "/events-off"},
		{"events-on", "/events-on"},
	}
	got := Faults()
	if len(got) != len(want) {
		t.Fatalf("Faults() has %d entries, want %d", len(got), len(want))
	}
	for i, f := range got {
		if f.Name() != want[i].name || f.Path != want[i].path {
			t.Errorf("Faults()[%d] = %s at %s, want %s at %s", i, f.Name(), f.Path, want[i].name, want[i].path)
		}
		if f.Short == "" || f.Done == nil || f.applyLocked == nil {
			t.Errorf("%s: Short, Done and applyLocked are required", f.Name())
		}
		positional := 0
		if f.Args != nil {
			positional = len(f.Args(&FaultArgs{}))
		}
		if words := len(strings.Fields(f.Use)) - 1; positional != words {
			t.Errorf("%s: Args fills %d fields, but Use %q names %d arguments", f.Name(), positional, f.Use, words)
		}
	}
}

// TestInjectInProcess applies each fault with Runtime.Inject (no admin API) and checks the state
// it leaves, then the errors of bad arguments.
func TestInjectInProcess(t *testing.T) {
	e := newTestEnv(t, nil)
	steps := []struct {
		fault string
		args  FaultArgs
		check func() bool
	}{
		{"fail-pulls", FaultArgs{Image: "busybox", Count: 2}, func() bool {
			pf := e.rt.faults.pullFailures[normalizeImageRef("busybox")]
			return pf != nil && pf.remaining == 2 && pf.message == "injected pull failure"
		}},
		{"fail-pulls", FaultArgs{Image: "busybox"}, func() bool { return len(e.rt.faults.pullFailures) == 0 }},
		{"latency", FaultArgs{Method: "*", Duration: "2s"}, func() bool { return e.rt.faults.latency["*"] == 2*time.Second }},
		{"latency", FaultArgs{Method: "*", Duration: "0s"}, func() bool { return len(e.rt.faults.latency) == 0 }},
		{"runtime-not-ready", FaultArgs{}, func() bool {
			return e.rt.faults.runtimeDown != nil && e.rt.faults.runtimeDown.GetReason() == "FaultInjected"
		}},
		{"runtime-ready", FaultArgs{}, func() bool { return e.rt.faults.runtimeDown == nil }},
		{"events-off", FaultArgs{}, func() bool { return e.rt.faults.eventsOff }},
		{"events-on", FaultArgs{}, func() bool { return !e.rt.faults.eventsOff }},
	}
	for _, s := range steps {
		if err := e.rt.Inject(s.fault, s.args); err != nil {
			t.Fatalf("Inject(%s, %+v): %v", s.fault, s.args, err)
		}
		e.rt.mu.Lock()
		ok := s.check()
		e.rt.mu.Unlock()
		if !ok {
			t.Errorf("after Inject(%s, %+v) the runtime's faults are %+v", s.fault, s.args, e.rt.faults.describe())
		}
	}
	for _, bad := range []struct {
		fault string
		args  FaultArgs
		code  codes.Code
	}{
		{"no-such-fault", FaultArgs{}, codes.InvalidArgument},
		{"fail-pulls", FaultArgs{}, codes.InvalidArgument},
		{"latency", FaultArgs{Method: "*", Duration: "soon"}, codes.InvalidArgument},
		{"latency", FaultArgs{Duration: "1s"}, codes.InvalidArgument},
		{"kill-container", FaultArgs{ID: "nope"}, codes.NotFound},
		{"sandbox-not-ready", FaultArgs{ID: "nope"}, codes.NotFound},
	} {
		if err := e.rt.Inject(bad.fault, bad.args); status.Code(err) != bad.code {
			t.Errorf("Inject(%s, %+v) = %v, want %s", bad.fault, bad.args, err, bad.code)
		}
	}
}

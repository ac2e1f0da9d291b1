package fakeruntime

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestVersionAndStatus(t *testing.T) {
	e := newTestEnv(t, nil)
	v, err := e.rs.Version(e.ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if v.GetRuntimeName() != "minikubelet-fake" || v.GetRuntimeApiVersion() != "v1" {
		t.Errorf("Version = %v, want minikubelet-fake speaking v1", v)
	}
	st, err := e.rs.Status(e.ctx, &runtimeapi.StatusRequest{Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.GetStatus().GetConditions() {
		if !c.GetStatus() {
			t.Errorf("condition %s is false on a healthy runtime", c.GetType())
		}
	}
	if len(st.GetStatus().GetConditions()) != 2 || !strings.Contains(st.GetInfo()["config"], `"podCIDR":"127.88.0.0/16"`) {
		t.Errorf("Status = %v, want RuntimeReady and NetworkReady and a config info", st)
	}
	if _, err := e.rs.UpdateRuntimeConfig(e.ctx, &runtimeapi.UpdateRuntimeConfigRequest{RuntimeConfig: &runtimeapi.RuntimeConfig{
		NetworkConfig: &runtimeapi.NetworkConfig{PodCidr: "10.244.1.0/24"}}}); err != nil {
		t.Fatal(err)
	}
	st, _ = e.rs.Status(e.ctx, &runtimeapi.StatusRequest{Verbose: true})
	if !strings.Contains(st.GetInfo()["config"], "10.244.1.0/24") {
		t.Errorf("Status info %q does not show the pod CIDR from UpdateRuntimeConfig", st.GetInfo()["config"])
	}
}

// TestSandboxLifecycle pins the CRI sandbox state machine: READY → NOTREADY → removed, with
// idempotent stop and remove and a unique pod IP per non-host-network sandbox.
func TestSandboxLifecycle(t *testing.T) {
	e := newTestEnv(t, nil)
	a := e.runSandbox(t, sandboxConfig("a"))
	b := e.runSandbox(t, sandboxConfig("b"))
	hostCfg := sandboxConfig("host")
	hostCfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}}
	host := e.runSandbox(t, hostCfg)

	status := func(id string) *runtimeapi.PodSandboxStatus {
		t.Helper()
		resp, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
		if err != nil {
			t.Fatalf("PodSandboxStatus: %v", err)
		}
		return resp.GetStatus()
	}
	sa, sb, sh := status(a), status(b), status(host)
	if sa.GetState() != runtimeapi.PodSandboxState_SANDBOX_READY || sa.GetCreatedAt() != t0().UnixNano() {
		t.Errorf("new sandbox: state %v createdAt %d, want READY at the clock's time", sa.GetState(), sa.GetCreatedAt())
	}
	if sa.GetNetwork().GetIp() != "127.88.0.2" || sb.GetNetwork().GetIp() != "127.88.0.3" {
		t.Errorf("pod IPs %q, %q; want 127.88.0.2 and 127.88.0.3 (DefaultPodCIDR is loopback)", sa.GetNetwork().GetIp(), sb.GetNetwork().GetIp())
	}
	if sh.GetNetwork().GetIp() != "" {
		t.Errorf("host-network sandbox got IP %q, want none", sh.GetNetwork().GetIp())
	}
	if sa.GetLabels()["app"] != "a" || sa.GetAnnotations()["note"] != "kept as given" {
		t.Errorf("labels/annotations not kept: %v %v", sa.GetLabels(), sa.GetAnnotations())
	}
	// A short unique prefix names the sandbox, as with containerd.
	if got := status(a[:8]).GetId(); got != a {
		t.Errorf("status by prefix returned %s, want %s", got, a)
	}

	for range 2 { // idempotent
		if _, err := e.rs.StopPodSandbox(e.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: a}); err != nil {
			t.Fatalf("StopPodSandbox: %v", err)
		}
	}
	if got := status(a).GetState(); got != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		t.Errorf("after stop: %v, want NOTREADY", got)
	}
	for range 2 {
		if _, err := e.rs.RemovePodSandbox(e.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: a}); err != nil {
			t.Fatalf("RemovePodSandbox: %v", err)
		}
	}
	_, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: a})
	wantCode(t, err, codes.NotFound)
	// The freed IP is handed out again.
	if ip := status(e.runSandbox(t, sandboxConfig("c"))).GetNetwork().GetIp(); ip != "127.88.0.2" {
		t.Errorf("IP after reuse = %q, want 127.88.0.2", ip)
	}
	// Removing a sandbox removes its containers.
	cid := e.createContainer(t, b, containerConfig("app", "sleep", "infinity"))
	e.startContainer(t, cid)
	if _, err := e.rs.RemovePodSandbox(e.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: b}); err != nil {
		t.Fatal(err)
	}
	_, err = e.rs.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cid})
	wantCode(t, err, codes.NotFound)
}

// A verbose PodSandboxStatus shows the sandbox's config in its info, as containerd's does: that
// is where `crictl inspectp` shows the pod's cgroup parent (lab 10).
func TestSandboxVerboseInfo(t *testing.T) {
	e := newTestEnv(t, nil)
	cfg := sandboxConfig("a")
	cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{CgroupParent: "/kubepods/burstable/pod1234"}
	id := e.runSandbox(t, cfg)
	resp, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Runtime     string `json:"runtime"`
		HostNetwork bool   `json:"hostNetwork"`
		Config      struct {
			Linux struct {
				CgroupParent string `json:"cgroup_parent"`
			} `json:"linux"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(resp.GetInfo()["info"]), &info); err != nil {
		t.Fatalf("info %q is not JSON: %v", resp.GetInfo()["info"], err)
	}
	if info.Runtime != RuntimeName || info.HostNetwork || info.Config.Linux.CgroupParent != "/kubepods/burstable/pod1234" {
		t.Errorf("info %s: want the runtime's name, hostNetwork false and config.linux.cgroup_parent /kubepods/burstable/pod1234", resp.GetInfo()["info"])
	}
	if len(resp.GetContainersStatuses()) != 0 {
		t.Errorf("a sandbox without containers lists %d container statuses", len(resp.GetContainersStatuses()))
	}
}

// TestErrorCodes pins the gRPC codes the kubelet and critest rely on.
func TestErrorCodes(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	cid := e.createContainer(t, sb, containerConfig("app", "sleep", "infinity"))
	stopped := e.runSandbox(t, sandboxConfig("stopped"))
	if _, err := e.rs.StopPodSandbox(e.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: stopped}); err != nil {
		t.Fatal(err)
	}
	unknown := strings.Repeat("f", 64)

	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"RunPodSandbox without config", func() error {
			_, err := e.rs.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{})
			return err
		}, codes.InvalidArgument},
		{"RunPodSandbox without uid", func() error {
			_, err := e.rs.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
				Metadata: &runtimeapi.PodSandboxMetadata{Name: "x", Namespace: "y"}}})
			return err
		}, codes.InvalidArgument},
		{"RunPodSandbox with a taken name", func() error {
			_, err := e.rs.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("pod")})
			return err
		}, codes.AlreadyExists},
		{"RunPodSandbox with the next attempt is fine", func() error {
			cfg := sandboxConfig("pod")
			cfg.Metadata.Attempt = 1
			_, err := e.rs.RunPodSandbox(e.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
			return err
		}, codes.OK},
		{"PodSandboxStatus of unknown", func() error {
			_, err := e.rs.PodSandboxStatus(e.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: unknown})
			return err
		}, codes.NotFound},
		{"StopPodSandbox of unknown is fine", func() error {
			_, err := e.rs.StopPodSandbox(e.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: unknown})
			return err
		}, codes.OK},
		{"CreateContainer without config", func() error {
			_, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb})
			return err
		}, codes.InvalidArgument},
		{"CreateContainer without image", func() error {
			cfg := containerConfig("noimage")
			cfg.Image = nil
			_, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: cfg})
			return err
		}, codes.InvalidArgument},
		{"CreateContainer in unknown sandbox", func() error {
			_, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: unknown, Config: containerConfig("x")})
			return err
		}, codes.NotFound},
		{"CreateContainer in a NOTREADY sandbox", func() error {
			_, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: stopped, Config: containerConfig("x")})
			return err
		}, codes.FailedPrecondition},
		{"CreateContainer with an image never pulled", func() error {
			cfg := containerConfig("x")
			cfg.Image.Image = "never/pulled"
			_, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: cfg})
			return err
		}, codes.NotFound},
		{"CreateContainer with a taken name", func() error {
			_, err := e.rs.CreateContainer(e.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("app")})
			return err
		}, codes.AlreadyExists},
		{"StartContainer of unknown", func() error {
			_, err := e.rs.StartContainer(e.ctx, &runtimeapi.StartContainerRequest{ContainerId: unknown})
			return err
		}, codes.NotFound},
		{"ContainerStatus of unknown", func() error {
			_, err := e.rs.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: unknown})
			return err
		}, codes.NotFound},
		{"StopContainer of unknown is fine", func() error {
			_, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: unknown})
			return err
		}, codes.OK},
		{"RemoveContainer of unknown is fine", func() error {
			_, err := e.rs.RemoveContainer(e.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: unknown})
			return err
		}, codes.OK},
		{"ExecSync in a CREATED container", func() error {
			_, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: cid, Cmd: []string{"true"}})
			return err
		}, codes.FailedPrecondition},
		{"Exec in a CREATED container", func() error {
			_, err := e.rs.Exec(e.ctx, &runtimeapi.ExecRequest{ContainerId: cid, Cmd: []string{"sh"}, Stdout: true})
			return err
		}, codes.FailedPrecondition},
		{"CheckpointContainer is not implemented", func() error {
			_, err := e.rs.CheckpointContainer(e.ctx, &runtimeapi.CheckpointContainerRequest{ContainerId: cid})
			return err
		}, codes.Unimplemented},
		{"PullImage without image", func() error {
			_, err := e.is.PullImage(e.ctx, &runtimeapi.PullImageRequest{})
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, tc.call(), tc.want) })
	}
}

// TestContainerStateMachine pins CREATED → RUNNING → EXITED and the exit codes of StopContainer.
func TestContainerStateMachine(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	cfg := containerConfig("app", "sleep", "infinity")
	cfg.Metadata.Attempt = 2
	id := e.createContainer(t, sb, cfg)

	st := e.containerStatus(t, id)
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED || st.GetCreatedAt() != t0().UnixNano() || st.GetStartedAt() != 0 {
		t.Errorf("created: %v", st)
	}
	if st.GetMetadata().GetAttempt() != 2 || st.GetLabels()["container"] != "app" || st.GetAnnotations()["a"] != "b" {
		t.Errorf("metadata, labels or annotations not kept: %v", st)
	}
	if !strings.HasPrefix(st.GetImageRef(), "docker.io/library/busybox@sha256:") || !strings.HasPrefix(st.GetImageId(), "sha256:") {
		t.Errorf("image ref %q, image id %q", st.GetImageRef(), st.GetImageId())
	}

	e.clock.Step(time.Second)
	e.startContainer(t, id)
	st = e.containerStatus(t, id)
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING || st.GetStartedAt() != t0().Add(time.Second).UnixNano() {
		t.Errorf("started: %v", st)
	}
	_, err := e.rs.StartContainer(e.ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	wantCode(t, err, codes.FailedPrecondition)

	e.clock.Step(time.Hour) // sleep infinity outlives any clock step
	if got := e.containerStatus(t, id).GetState(); got != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("sleep infinity: %v after an hour, want RUNNING", got)
	}
	for range 2 { // idempotent
		if _, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30}); err != nil {
			t.Fatal(err)
		}
	}
	st = e.containerStatus(t, id)
	if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED || st.GetExitCode() != 143 || st.GetReason() != "Error" ||
		st.GetFinishedAt() != t0().Add(time.Hour+time.Second).UnixNano() {
		t.Errorf("stopped with SIGTERM: %v, want EXITED 143 Error", st)
	}

	// Timeout 0 means SIGKILL at once.
	killed := e.createContainer(t, sb, containerConfig("killed", "sleep", "infinity"))
	e.startContainer(t, killed)
	if _, err := e.rs.StopContainer(e.ctx, &runtimeapi.StopContainerRequest{ContainerId: killed}); err != nil {
		t.Fatal(err)
	}
	if got := e.containerStatus(t, killed).GetExitCode(); got != 137 {
		t.Errorf("exit code after StopContainer(timeout 0) = %d, want 137", got)
	}

	// A running container is removed by force.
	running := e.createContainer(t, sb, containerConfig("running", "sleep", "infinity"))
	e.startContainer(t, running)
	for range 2 {
		if _, err := e.rs.RemoveContainer(e.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: running}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.rs.ContainerStatus(e.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: running})
	wantCode(t, err, codes.NotFound)

	// Stopping the sandbox stops its containers.
	last := e.createContainer(t, sb, containerConfig("last", "sleep", "infinity"))
	e.startContainer(t, last)
	if _, err := e.rs.StopPodSandbox(e.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	if got := e.containerStatus(t, last).GetState(); got != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("container of a stopped sandbox is %v, want EXITED", got)
	}
}

// TestContainerPrograms runs the programs of doc.go's grammar on the fake clock and checks exit
// codes, timing and logs.
func TestContainerPrograms(t *testing.T) {
	tests := []struct {
		name       string
		command    []string
		step       time.Duration // clock step after start; the container must still run before it
		wantCode   int32
		wantReason string
		wantLog    string // log lines without timestamps
	}{
		{"exit at once", []string{"sh", "-c", "exit 3"}, 0, 3, "Error", ""},
		{"echo then exit 0", []string{"echo", "hello", "world"}, 0, 0, "Completed", "stdout F hello world\n"},
		{"sleep N exits 0 after N seconds", []string{"sleep", "10"}, 10 * time.Second, 0, "Completed", ""},
		{"sequence", []string{"sh", "-c", "echo hi; sleep 5; echo oops >&2; exit 2"}, 5 * time.Second, 2, "Error",
			"stdout F hi\nstderr F oops\n"},
		{"bad sleep fails", []string{"sleep", "soon"}, 0, 1, "Error", "stderr F sleep: invalid time interval 'soon'\n"},
		{"silent built-ins write no log lines", []string{"sh", "-c", "touch /tmp/x; test -f /tmp/x && echo done"}, 0, 0, "Completed", "stdout F done\n"},
		{"; goes on after a failure, as sh does", []string{"sh", "-c", "cat /none; echo after"}, 0, 0, "Completed",
			"stderr F cat: can't open '/none': No such file or directory\nstdout F after\n"},
		{"the last status is the exit code", []string{"sh", "-c", "echo x > /tmp/f; test -d /tmp/f"}, 0, 1, "Error", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			cfg := sandboxConfig("pod")
			cfg.LogDirectory = filepath.Join(e.dir, "pods", "pod") // not created yet: the runtime must
			sb := e.runSandbox(t, cfg)
			id := e.createContainer(t, sb, containerConfig("app", tc.command...))
			e.startContainer(t, id)
			if tc.step > 0 {
				e.clock.Step(tc.step - time.Millisecond)
				if got := e.containerStatus(t, id).GetState(); got != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Fatalf("before %v the container is %v, want RUNNING", tc.step, got)
				}
				e.clock.Step(time.Millisecond)
			}
			st := e.waitExited(t, id)
			if st.GetExitCode() != tc.wantCode || st.GetReason() != tc.wantReason {
				t.Errorf("exit code %d reason %q, want %d %q", st.GetExitCode(), st.GetReason(), tc.wantCode, tc.wantReason)
			}
			if want := t0().Add(tc.step).UnixNano(); st.GetFinishedAt() != want {
				t.Errorf("finishedAt %d, want %d", st.GetFinishedAt(), want)
			}
			wantPath := filepath.Join(cfg.LogDirectory, "app", "0.log")
			if st.GetLogPath() != wantPath {
				t.Errorf("LogPath %q, want %q", st.GetLogPath(), wantPath)
			}
			data, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("read log: %v", err)
			}
			var stripped strings.Builder
			for _, line := range strings.SplitAfter(string(data), "\n") {
				if line == "" {
					continue
				}
				ts, rest, _ := strings.Cut(line, " ")
				if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
					t.Errorf("log line %q does not start with an RFC3339Nano timestamp", line)
				}
				stripped.WriteString(rest)
			}
			if stripped.String() != tc.wantLog {
				t.Errorf("log %q, want %q", stripped.String(), tc.wantLog)
			}
		})
	}
}

func TestLogTimestampsComeFromTheClock(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod")) // no LogDirectory: Config.LogRoot applies
	id := e.createContainer(t, sb, containerConfig("app", "echo", "x"))
	e.startContainer(t, id)
	st := e.waitExited(t, id)
	data, err := os.ReadFile(st.GetLogPath())
	if err != nil {
		t.Fatal(err)
	}
	if want := "2016-10-06T00:17:09.669794202Z stdout F x\n"; string(data) != want {
		t.Errorf("log = %q, want %q", data, want)
	}
	if !strings.HasPrefix(st.GetLogPath(), filepath.Join(e.dir, "logs")) {
		t.Errorf("LogPath %q is not under LogRoot", st.GetLogPath())
	}
}

func TestExecSync(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	id := e.createContainer(t, sb, containerConfig("app", "sleep", "infinity"))
	e.startContainer(t, id)
	tests := []struct {
		name                 string
		cmd                  []string
		wantStdout, wantErrS string
		wantCode             int32
	}{
		{"echo", []string{"echo", "x"}, "x\n", "", 0},
		{"exit code", []string{"sh", "-c", "echo a; echo b >&2; exit 7"}, "a\n", "b\n", 7},
		{"false", []string{"false"}, "", "", 1},
		{"echo -n", []string{"echo", "-n", "hello"}, "hello", "", 0},
		{"unknown commands succeed (never run on the host)", []string{"rm", "-rf", "/"}, "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: tc.cmd, Timeout: 5})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.GetStdout()) != tc.wantStdout || string(resp.GetStderr()) != tc.wantErrS || resp.GetExitCode() != tc.wantCode {
				t.Errorf("got %q %q %d, want %q %q %d", resp.GetStdout(), resp.GetStderr(), resp.GetExitCode(), tc.wantStdout, tc.wantErrS, tc.wantCode)
			}
		})
	}
	t.Run("timeout on the clock", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := e.rs.ExecSync(e.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"sleep", "infinity"}, Timeout: 2})
			done <- err
		}()
		waitForWaiters(t, e)
		e.clock.Step(2 * time.Second)
		wantCode(t, <-done, codes.DeadlineExceeded)
	})
}

// waitForWaiters waits until something is waiting on the fake clock.
func waitForWaiters(t *testing.T, e *testEnv) {
	t.Helper()
	poll(t, e.ctx, e.clock.HasWaiters)
}

// TestListFilters pins the filters of ListPodSandbox and ListContainers.
func TestListFilters(t *testing.T) {
	e := newTestEnv(t, nil)
	sbA := e.runSandbox(t, sandboxConfig("a"))
	sbB := e.runSandbox(t, sandboxConfig("b"))
	if _, err := e.rs.StopPodSandbox(e.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbB}); err != nil {
		t.Fatal(err)
	}
	running := e.createContainer(t, sbA, containerConfig("running", "sleep", "infinity"))
	e.startContainer(t, running)
	created := e.createContainer(t, sbA, containerConfig("created"))

	sandboxes := func(f *runtimeapi.PodSandboxFilter) []string {
		resp, err := e.rs.ListPodSandbox(e.ctx, &runtimeapi.ListPodSandboxRequest{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range resp.GetItems() {
			ids = append(ids, s.GetId())
		}
		return ids
	}
	containers := func(f *runtimeapi.ContainerFilter) []string {
		resp, err := e.rs.ListContainers(e.ctx, &runtimeapi.ListContainersRequest{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range resp.GetContainers() {
			ids = append(ids, c.GetId())
		}
		return ids
	}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"all sandboxes", sandboxes(nil), []string{sbA, sbB}},
		{"sandbox by id prefix", sandboxes(&runtimeapi.PodSandboxFilter{Id: sbB[:10]}), []string{sbB}},
		{"ready sandboxes", sandboxes(&runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}), []string{sbA}},
		{"sandbox by label", sandboxes(&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "b"}}), []string{sbB}},
		{"sandbox label mismatch", sandboxes(&runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"app": "zzz"}}), nil},
		{"all containers", containers(nil), []string{running, created}},
		{"running containers", containers(&runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}), []string{running}},
		{"containers of sandbox", containers(&runtimeapi.ContainerFilter{PodSandboxId: sbB}), nil},
		{"container by id", containers(&runtimeapi.ContainerFilter{Id: created}), []string{created}},
		{"container by label", containers(&runtimeapi.ContainerFilter{LabelSelector: map[string]string{"container": "running"}}), []string{running}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Join(tc.got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestImages(t *testing.T) {
	e := newTestEnv(t, nil)
	id := e.pull(t, "busybox")
	if again := e.pull(t, "docker.io/library/busybox:latest"); again != id {
		t.Errorf("pulling the same image by its full name gave %s, want %s", again, id)
	}
	e.pull(t, "registry.k8s.io/pause:3.10")

	resp, err := e.is.ImageStatus(e.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:latest"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetImage().GetId() != id || resp.GetImage().GetRepoTags()[0] != "docker.io/library/busybox:latest" || resp.GetImage().GetSize() == 0 {
		t.Errorf("ImageStatus = %v", resp.GetImage())
	}
	resp, err = e.is.ImageStatus(e.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "nope"}})
	if err != nil || resp.GetImage() != nil {
		t.Errorf("ImageStatus of a missing image = %v, %v; want nil image and no error", resp.GetImage(), err)
	}
	list, err := e.is.ListImages(e.ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(list.GetImages()) != 2 {
		t.Fatalf("ListImages = %v, %v; want 2 images", list, err)
	}
	filtered, _ := e.is.ListImages(e.ctx, &runtimeapi.ListImagesRequest{Filter: &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{Image: id}}})
	if len(filtered.GetImages()) != 1 {
		t.Errorf("ListImages by ID = %v, want busybox", filtered.GetImages())
	}
	fs, err := e.is.ImageFsInfo(e.ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || fs.GetImageFilesystems()[0].GetUsedBytes().GetValue() == 0 {
		t.Errorf("ImageFsInfo = %v, %v", fs, err)
	}
	for range 2 { // idempotent
		if _, err := e.is.RemoveImage(e.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: id}}); err != nil {
			t.Fatal(err)
		}
	}
	list, _ = e.is.ListImages(e.ctx, &runtimeapi.ListImagesRequest{})
	if len(list.GetImages()) != 1 {
		t.Errorf("after RemoveImage: %d images, want 1", len(list.GetImages()))
	}
}

func TestStats(t *testing.T) {
	e := newTestEnv(t, nil)
	sb := e.runSandbox(t, sandboxConfig("pod"))
	id := e.createContainer(t, sb, containerConfig("app", "sleep", "infinity"))
	e.startContainer(t, id)
	e.clock.Step(10 * time.Second)

	cs, err := e.rs.ContainerStats(e.ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	if cs.GetStats().GetCpu().GetUsageCoreNanoSeconds().GetValue() == 0 || cs.GetStats().GetMemory().GetWorkingSetBytes().GetValue() < 4<<20 {
		t.Errorf("ContainerStats = %v, want CPU time and a working set", cs.GetStats())
	}
	list, err := e.rs.ListContainerStats(e.ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{PodSandboxId: sb}})
	if err != nil || len(list.GetStats()) != 1 {
		t.Errorf("ListContainerStats = %v, %v", list, err)
	}
	ps, err := e.rs.PodSandboxStats(e.ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: sb})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps.GetStats().GetLinux().GetContainers()) != 1 || ps.GetStats().GetLinux().GetNetwork().GetDefaultInterface().GetRxBytes().GetValue() == 0 {
		t.Errorf("PodSandboxStats = %v", ps.GetStats())
	}
	lps, err := e.rs.ListPodSandboxStats(e.ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	if err != nil || len(lps.GetStats()) != 1 {
		t.Errorf("ListPodSandboxStats = %v, %v", lps, err)
	}
}

// TestGetContainerEvents pins the events the evented PLEG consumes.
func TestGetContainerEvents(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	stream, err := e.rs.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, func() bool { return e.rt.subscriberCount() == 1 }) // the server subscribes asynchronously
	sb := e.runSandbox(t, sandboxConfig("pod"))
	id := e.createContainer(t, sb, containerConfig("app", "sh", "-c", "exit 1"))
	e.startContainer(t, id)
	if _, err := e.rs.RemoveContainer(e.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		sb + " CONTAINER_CREATED_EVENT", sb + " CONTAINER_STARTED_EVENT",
		id + " CONTAINER_CREATED_EVENT", id + " CONTAINER_STARTED_EVENT", id + " CONTAINER_STOPPED_EVENT", id + " CONTAINER_DELETED_EVENT",
	}
	for i, w := range want {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got := ev.GetContainerId() + " " + ev.GetContainerEventType().String(); got != w {
			t.Errorf("event %d = %s, want %s", i, got, w)
		}
		if ev.GetPodSandboxStatus().GetId() != sb {
			t.Errorf("event %d has sandbox status %v, want %s", i, ev.GetPodSandboxStatus(), sb)
		}
		// What upstream's consumer (evented.go processCRIEvents) reads: the pod's UID, name and
		// namespace from the sandbox's metadata, the time, and the container's status (a deleted
		// container's last one).
		if md := ev.GetPodSandboxStatus().GetMetadata(); md.GetUid() == "" || md.GetName() != "pod" || md.GetNamespace() == "" || ev.GetCreatedAt() == 0 {
			t.Errorf("event %d: sandbox metadata %v, createdAt %d; want the pod's UID, name and namespace and a time", i, md, ev.GetCreatedAt())
		}
		if ev.GetContainerId() == id && !slices.ContainsFunc(ev.GetContainersStatuses(), func(s *runtimeapi.ContainerStatus) bool { return s.GetId() == id }) {
			t.Errorf("event %d (%s) does not carry the container's status: %v", i, ev.GetContainerEventType(), ev.GetContainersStatuses())
		}
	}
}

// TestServeSockets pins the socket handling: stale sockets are replaced, live ones refused.
func TestServeSockets(t *testing.T) {
	dir, err := os.MkdirTemp("", "cri")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	if ul, ok := l.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // leave the file behind, as a crashed runtime does
	}
	_ = l.Close()
	e := newTestEnv(t, func(c *Config) { c.Socket = stale })
	if _, err := e.rs.Version(e.ctx, &runtimeapi.VersionRequest{}); err != nil {
		t.Errorf("serving over a stale socket: %v", err)
	}

	second, err := New(Config{Socket: stale})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Serve(context.Background()); err == nil || !strings.Contains(err.Error(), "another process is serving") {
		t.Errorf("second Serve on a live socket = %v, want a refusal", err)
	}

	if _, err := New(Config{Socket: "/" + strings.Repeat("x", 120)}); err == nil {
		t.Error("New accepted a socket path longer than unix sockets allow")
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted an empty socket path")
	}
}

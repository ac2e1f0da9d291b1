package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/pleg"
)

// The Manager is the runtime PLEG lists (status.go: GetPods, GetPodStatus). The check sits in a
// test file because pleg's own tests import this package: a non-test import of pleg here would
// be a cycle.
var _ pleg.Runtime = (*Manager)(nil)

// newFakeRuntime serves the fake CRI runtime on a real unix socket and connects a Manager to it
// through the real CRI client: the same code path as with containerd.
func newFakeRuntime(t *testing.T) (*Manager, *testingclock.FakeClock, context.Context, string) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	dir, err := os.MkdirTemp("", "kr") // short: unix socket paths are limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	rt, err := fakeruntime.New(fakeruntime.Config{Socket: filepath.Join(dir, "cri.sock"), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- rt.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("fake runtime: %v", err)
		}
		_ = os.RemoveAll(dir)
	})
	var client *remote.Client
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		client, err = remote.Dial(ctx, "unix://"+filepath.Join(dir, "cri.sock"), 10*time.Second)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("connect to the fake runtime: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	m, err := New(Config{Runtime: client.Runtime, Image: client.Image, PodLogsDir: filepath.Join(dir, "logs"), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return m, clk, ctx, dir
}

func podWithCommand(policy corev1.RestartPolicy, command ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			RestartPolicy: policy,
			Containers:    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: command, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
}

func podStatus(t *testing.T, ctx context.Context, m *Manager, pod *corev1.Pod) *kubecontainer.PodStatus {
	t.Helper()
	st, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A new pod gets a sandbox with an IP and a running container carrying the upstream labels and
// annotations; GetPods maps it back to the pod; KillPod stops it all; RemovePod removes it.
func TestSyncPodRunsAndKillsAPod(t *testing.T) {
	m, _, ctx, dir := newFakeRuntime(t)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	res := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if !res.Changed {
		t.Error("a sync that created a sandbox and started a container reports Changed=false (the pod worker would not ask PLEG to relist)")
	}
	st := podStatus(t, ctx, m, pod)
	if len(st.Sandboxes) != 1 || len(st.IPs) != 1 || st.Sandboxes[0].GetLabels()[LabelPodUID] != "uid-1" || st.Sandboxes[0].GetLabels()["app"] != "web" {
		t.Fatalf("sandboxes %v IPs %v", st.Sandboxes, st.IPs)
	}
	c := st.FindContainer("app")
	if c == nil || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING || c.Hash != HashContainer(&pod.Spec.Containers[0]) || c.RestartCount != 0 {
		t.Fatalf("container = %+v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "default_web_uid-1")); err != nil {
		t.Errorf("pod log directory: %v", err)
	}

	// A second sync changes nothing, and says so.
	if res := m.SyncPod(ctx, pod, st); res.Err() != nil || res.Changed {
		t.Fatalf("idle sync: err %v, changed %v", res.Err(), res.Changed)
	}
	if again := podStatus(t, ctx, m, pod); len(again.Containers) != 1 || len(again.Sandboxes) != 1 {
		t.Errorf("an idle sync created things: %d containers, %d sandboxes", len(again.Containers), len(again.Sandboxes))
	}

	pods, err := m.GetPods(ctx, false)
	if err != nil || len(pods) != 1 || pods[0].ID != "uid-1" || pods[0].Name != "web" || len(pods[0].Containers) != 1 {
		t.Fatalf("GetPods = %+v, %v", pods, err)
	}

	if err := m.KillPod(ctx, nil, st, 0); err != nil {
		t.Fatal(err)
	}
	st = podStatus(t, ctx, m, pod)
	if st.Sandboxes[0].GetState() != runtimeapi.PodSandboxState_SANDBOX_NOTREADY || st.FindContainer("app").State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("after KillPod: sandbox %s, container %s", st.Sandboxes[0].GetState(), st.FindContainer("app").State)
	}
	// Killing again is fine: stopping what is stopped is success.
	if err := m.KillPod(ctx, nil, st, 0); err != nil {
		t.Errorf("second KillPod: %v", err)
	}
	all, _ := m.GetPods(ctx, true)
	if err := m.RemovePod(ctx, all[0]); err != nil {
		t.Fatal(err)
	}
	if left, _ := m.GetPods(ctx, true); len(left) != 0 {
		t.Errorf("after RemovePod: %+v", left)
	}
}

// Upstream crash-loop backoff: a failing container restarts at once the first time, then waits
// 10 s, then 20 s …; meanwhile SyncPod reports CrashLoopBackOff with the back-off in its message.
func TestCrashLoopBackOff(t *testing.T) {
	m, clk, ctx, _ := newFakeRuntime(t)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sh", "-c", "exit 1")
	waitExited := func(restarts int) *kubecontainer.PodStatus {
		t.Helper()
		var st *kubecontainer.PodStatus
		err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			st = podStatus(t, ctx, m, pod)
			c := st.FindContainer("app")
			return c != nil && c.RestartCount == restarts && c.State == runtimeapi.ContainerState_CONTAINER_EXITED, nil
		})
		if err != nil {
			t.Fatalf("container never exited with restartCount %d: %+v", restarts, st.FindContainer("app"))
		}
		return st
	}
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	st := waitExited(0)
	if c := st.FindContainer("app"); c.ExitCode != 1 {
		t.Fatalf("exit code %d, want 1", c.ExitCode)
	}
	// The first restart is immediate.
	if err := m.SyncPod(ctx, pod, st).Err(); err != nil {
		t.Fatalf("first restart: %v", err)
	}
	st = waitExited(1)
	for _, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		res := m.SyncPod(ctx, pod, st)
		e, ok := res.ContainerErrors["app"]
		if !ok || e.Reason != ReasonCrashLoopBackOff || !strings.Contains(e.Message, "back-off "+wait.String()) {
			t.Fatalf("during back-off %s: %+v", wait, res.ContainerErrors)
		}
		if res.Changed {
			t.Fatalf("a sync that only met the back-off reports Changed (a crash-looping pod would relist on every sync)")
		}
		clk.Step(wait)
		if err := m.SyncPod(ctx, pod, st).Err(); err != nil {
			t.Fatalf("after %s: %v", wait, err)
		}
		st = waitExited(st.FindContainer("app").RestartCount + 1)
	}
}

// imagePullPolicy Never with a missing image, and a failing pull followed by ImagePullBackOff.
func TestImagePullPolicies(t *testing.T) {
	m, clk, ctx, dir := newFakeRuntime(t)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	res := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	if e := res.ContainerErrors["app"]; e.Reason != ReasonErrImageNeverPull {
		t.Errorf("PullNever of a missing image: %+v", res.ContainerErrors)
	}

	admin := fakeruntime.NewAdminClient(filepath.Join(dir, "cri.sock") + ".admin")
	if err := admin.Inject(ctx, "fail-pulls", fakeruntime.FaultArgs{Image: "busybox:1.36", Count: 1, Message: "registry unreachable"}); err != nil {
		t.Fatal(err)
	}
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	res = m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	if e := res.ContainerErrors["app"]; e.Reason != ReasonErrImagePull || !strings.Contains(e.Message, "registry unreachable") {
		t.Errorf("failed pull: %+v", res.ContainerErrors)
	}
	res = m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	if e := res.ContainerErrors["app"]; e.Reason != ReasonImagePullBackOff {
		t.Errorf("right after a failed pull: %+v, want ImagePullBackOff", res.ContainerErrors)
	}
	clk.Step(11 * time.Second)
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Errorf("after the pull back-off: %v", err)
	}
}

type fakeOptions struct {
	err error
}

func (f fakeOptions) GenerateRunContainerOptions(_ context.Context, _ *corev1.Pod, _ *corev1.Container, podIP string) (*RunContainerOptions, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &RunContainerOptions{
		Envs:   []EnvVar{{Name: "POD_IP", Value: podIP}, {Name: "PASSWORD", Value: "s3cret"}},
		Mounts: []Mount{{ContainerPath: "/etc/config", HostPath: "/var/lib/x/volumes/cfg", ReadOnly: true}},
	}, nil
}

// Upstream GenerateRunContainerOptions: resolved env and mounts reach the CRI config; an error
// keeps the container waiting with CreateContainerConfigError and the error as message.
func TestRunContainerOptions(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")

	m.options = fakeOptions{err: errors.New(`secret "db" not found`)}
	res := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod))
	if e := res.ContainerErrors["app"]; e.Reason != ReasonCreateConfigError || e.Message != `secret "db" not found` {
		t.Fatalf("with a failing generator: %+v", res.ContainerErrors)
	}

	m.options = fakeOptions{}
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	st := podStatus(t, ctx, m, pod)
	c := st.FindContainer("app")
	out, err := m.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: c.ID, Cmd: []string{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out.GetStdout()); !strings.Contains(got, "PASSWORD=s3cret") || !strings.Contains(got, "POD_IP="+st.IPs[0]) {
		t.Errorf("env in the container:\n%s", got)
	}
	cs, err := m.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ID})
	if err != nil || len(cs.GetStatus().GetMounts()) != 1 || cs.GetStatus().GetMounts()[0].GetContainerPath() != "/etc/config" {
		t.Errorf("mounts = %v (err %v)", cs.GetStatus().GetMounts(), err)
	}
}

// The journal shows the CRI calls of a pod's life in order, each with the pod, the container or
// sandbox ID, the container's name and how long it took.
func TestJournalRecordsCRICalls(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	j := journal.NewWithClock(32, clock.RealClock{})
	m.journal = j.For(journal.SourceCRI)
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.KillPod(ctx, nil, podStatus(t, ctx, m, pod), 0); err != nil {
		t.Fatal(err)
	}
	pods, err := m.GetPods(ctx, true)
	if err != nil || len(pods) != 1 {
		t.Fatalf("GetPods = %v, %v", pods, err)
	}
	if err := m.RemovePod(ctx, pods[0]); err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, e := range j.Read(0, journal.Filter{}).Events {
		if e.Source != journal.SourceCRI || e.Pod != "default/web" || e.UID != "uid-1" || e.Fields["id"] == "" || e.Fields["duration"] == "" {
			t.Errorf("event %+v: want source cri, pod default/web, UID uid-1, an id and a duration", e)
		}
		if e.Kind != "RunPodSandbox" && e.Kind != "StopPodSandbox" && e.Kind != "RemovePodSandbox" && e.Fields["container"] != "app" {
			t.Errorf("%s: container %q, want app", e.Kind, e.Fields["container"])
		}
		got = append(got, e.Kind)
	}
	want := []string{"RunPodSandbox", "PullImage", "CreateContainer", "StartContainer", "StopContainer", "StopPodSandbox", "StopPodSandbox", "RemovePodSandbox"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("journal %v, want %v", got, want)
	}
}

// The Events a pod's start and stop leave, with upstream's reasons and messages and the
// container's field path, as `kubectl describe pod` lists them (upstream recordContainerEvent).
func TestPodEvents(t *testing.T) {
	m, _, ctx, _ := newFakeRuntime(t)
	rec := &refRecorder{FakeRecorder: record.NewFakeRecorder(32)}
	m.recorder = rec
	pod := podWithCommand(corev1.RestartPolicyAlways, "sleep", "infinity")
	if err := m.SyncPod(ctx, pod, podStatus(t, ctx, m, pod)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.KillPod(ctx, pod, podStatus(t, ctx, m, pod), 0); err != nil {
		t.Fatal(err)
	}
	got := rec.events
	want := []string{
		`Normal Pulling Pulling image "busybox:1.36"`,
		`Normal Pulled Successfully pulled image "busybox:1.36" in `,
		`Normal Created Container created`,
		`Normal Started Container started`,
		`Normal Killing Stopping container app`,
	}
	if len(got) != len(want) {
		t.Fatalf("events = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) || !strings.Contains(got[i], "spec.containers{app}") {
			t.Errorf("event %d = %q, want %q… about spec.containers{app}", i, got[i], want[i])
		}
	}
}

// refRecorder keeps each Event with the field path it is about.
type refRecorder struct {
	*record.FakeRecorder
	events []string
}

func (r *refRecorder) Event(obj runtime.Object, eventType, reason, message string) {
	r.events = append(r.events, fmt.Sprintf("%s %s %s (%s)", eventType, reason, message, obj.(*corev1.ObjectReference).FieldPath))
}

func (r *refRecorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	r.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

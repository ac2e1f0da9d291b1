package pleg

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// newCRIRuntime serves the fake CRI runtime on a real unix socket and builds a kuberuntime.Manager
// on it through the real CRI client, the same path as with containerd. It returns the manager,
// the shared fake clock, a context, the admin client for fault injection, and the CRI client's
// RuntimeService (for the container events stream).
func newCRIRuntime(t *testing.T) (*kuberuntime.Manager, *testingclock.FakeClock, context.Context, *fakeruntime.AdminClient, runtimeapi.RuntimeServiceClient) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	dir, err := os.MkdirTemp("", "pleg") // short: unix socket paths are limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "cri.sock")
	clk := testingclock.NewFakeClock(at(0))
	rt, err := fakeruntime.New(fakeruntime.Config{Socket: socket, Clock: clk})
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
	select {
	case <-rt.Ready():
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	var client *remote.Client
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		client, err = remote.Dial(ctx, "unix://"+socket, 10*time.Second)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("connect to the fake runtime: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	m, err := kuberuntime.New(kuberuntime.Config{Runtime: client.Runtime, Image: client.Image, PodLogsDir: filepath.Join(dir, "logs"), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return m, clk, ctx, fakeruntime.NewAdminClient(socket + ".admin"), client.Runtime
}

// eventsOfType returns the container IDs of the waiting events of one type.
func eventsOfType(ch <-chan *PodLifecycleEvent, uid string, typ PodLifeCycleEventType) []string {
	var ids []string
	for {
		select {
		case e := <-ch:
			if string(e.ID) == uid && e.Type == typ {
				ids = append(ids, e.Data.(string))
			}
		default:
			return ids
		}
	}
}

// End to end over CRI: PLEG sees a container kuberuntime started (ContainerStarted, cache shows
// it running), and sees it die when the runtime kills it (ContainerDied, cache has exit code 7).
func TestRelistAgainstTheFakeCRIRuntime(t *testing.T) {
	m, clk, ctx, admin, _ := newCRIRuntime(t)
	cache := NewCache(clk)
	g, err := New(Config{Runtime: m, Cache: cache, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers:    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	status, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SyncPod(ctx, pod, status).Err(); err != nil {
		t.Fatal(err)
	}

	clk.Step(time.Second)
	g.Relist(ctx)
	cached, err := cache.Get(pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	app := cached.FindContainer("app")
	if app == nil || app.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("cached container after the first relist = %+v", app)
	}
	if len(cached.Sandboxes) != 1 {
		t.Fatalf("cached sandboxes = %d, want 1", len(cached.Sandboxes))
	}
	want := []string{app.ID, cached.Sandboxes[0].GetId()}
	slices.Sort(want)
	if got := eventsOfType(g.Watch(), "uid-1", ContainerStarted); !slices.Equal(got, want) {
		t.Errorf("ContainerStarted events for %v, want the container and the sandbox %v", got, want)
	}

	if err := admin.KillContainer(ctx, app.ID, 7); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	g.Relist(ctx)
	if got := eventsOfType(g.Watch(), "uid-1", ContainerDied); !slices.Equal(got, []string{app.ID}) {
		t.Errorf("ContainerDied events for %v, want the killed container %s", got, app.ID)
	}
	cached, err = cache.Get(pod.UID)
	if err != nil {
		t.Fatal(err)
	}
	if c := cached.FindContainer("app"); c == nil || c.State != runtimeapi.ContainerState_CONTAINER_EXITED || c.ExitCode != 7 {
		t.Errorf("cached container after the kill = %+v, want EXITED with exit code 7", c)
	}
	if ok, err := g.Healthy(); !ok {
		t.Errorf("Healthy after two relists: %v", err)
	}
}

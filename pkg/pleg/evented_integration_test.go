package pleg

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
)

// journaled waits (in real time: the runtime works on its own) until the journal holds a PLEG
// event of kind with the given fields, and returns it.
func journaled(ctx context.Context, t *testing.T, j *journal.Journal, kind string, fields map[string]string) journal.Event {
	t.Helper()
	var found journal.Event
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, e := range j.Read(0, journal.Filter{Source: journal.SourcePLEG}).Events {
			if e.Kind != kind {
				continue
			}
			match := true
			for k, v := range fields {
				match = match && e.Fields[k] == v
			}
			if match {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s %v in the journal: %v", kind, fields, err)
	}
	return found
}

// syncPod runs kuberuntime's SyncPod on the pod's current status, as a pod worker does.
func syncPod(ctx context.Context, t *testing.T, m *kuberuntime.Manager, pod *corev1.Pod) {
	t.Helper()
	status, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SyncPod(ctx, pod, status).Err(); err != nil {
		t.Fatal(err)
	}
}

// End to end over CRI with the fake runtime's real event stream: once the stream is trusted, a
// started and a killed container reach the cache and the channel as events (via=event), with no
// relist due for 5 minutes; with the stream refused as containerd 1.6 refuses it (events-off),
// PLEG falls back to relisting every second and still sees changes (via=relist); with the stream
// back (events-on), it is trusted again.
func TestEventedAgainstTheFakeCRIRuntime(t *testing.T) {
	m, clk, ctx, admin, rs := newCRIRuntime(t)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	j := journal.NewWithClock(256, clock.RealClock{})
	cache := NewCache(clk)
	g, err := New(Config{Runtime: m, Cache: cache, Clock: clk, Journal: j.For(journal.SourcePLEG)})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvented(EventedConfig{Generic: g, Events: rs, Journal: j.For(journal.SourcePLEG)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	stepUntil(ctx, t, clk, "stream up", func() bool { return slices.Contains(kinds(j), "stream up") })

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers:    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
	syncPod(ctx, t, m, pod)
	// No clock step from here on: the next relist is 5 minutes away, so what follows is events.
	started := func(uid types.UID) (string, bool) {
		st, _ := cache.Get(uid)
		if c := st.FindContainer("app"); c != nil && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return c.ID, true
		}
		return "", false
	}
	var app string
	if err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		var ok bool
		app, ok = started(pod.UID)
		return ok, nil
	}); err != nil {
		t.Fatalf("the started container never reached the cache: %v", err)
	}
	journaled(ctx, t, j, "ContainerStarted", map[string]string{"id": app, "via": "event"})

	if err := admin.KillContainer(ctx, app, 7); err != nil {
		t.Fatal(err)
	}
	journaled(ctx, t, j, "ContainerDied", map[string]string{"id": app, "via": "event"})
	st, _ := cache.Get(pod.UID)
	if c := st.FindContainer("app"); c == nil || c.State != runtimeapi.ContainerState_CONTAINER_EXITED || c.ExitCode != 7 {
		t.Errorf("cached container after the kill = %+v, want EXITED with exit code 7", c)
	}

	// containerd 1.6: GetContainerEvents is Unimplemented. PLEG says so and relists every second.
	if err := admin.Inject(ctx, "events-off", fakeruntime.FaultArgs{}); err != nil {
		t.Fatal(err)
	}
	down := journaled(ctx, t, j, "stream down", nil)
	if !strings.Contains(down.Fields["error"], "Unimplemented") || down.Fields["relistPeriod"] != "1s" {
		t.Errorf("stream down %v: want Unimplemented and a 1s relist", down.Fields)
	}
	syncPod(ctx, t, m, pod) // restarts the killed container; only a relist can see it now
	stepUntil(ctx, t, clk, "a relist to report the restarted container", func() bool {
		restarted, ok := started(pod.UID)
		if !ok || restarted == app {
			return false
		}
		for _, e := range j.Read(0, journal.Filter{Source: journal.SourcePLEG}).Events {
			if e.Kind == "ContainerStarted" && e.Fields["id"] == restarted && e.Fields["via"] == "relist" {
				return true
			}
		}
		return false
	})
	if ok, err := e.Healthy(); !ok {
		t.Errorf("Healthy while relisting: %v", err)
	}

	// The stream is back: trusted again after the retry.
	if err := admin.Inject(ctx, "events-on", fakeruntime.FaultArgs{}); err != nil {
		t.Fatal(err)
	}
	stepUntil(ctx, t, clk, "stream up again", func() bool { return len(kinds(j)) == 3 })
	if got, want := kinds(j), []string{"stream up", "stream down", "stream up"}; !slices.Equal(got, want) {
		t.Errorf("journal %v, want %v", got, want)
	}
}

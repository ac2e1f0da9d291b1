package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/pleg"
	"github.com/minikubelet/minikubelet/pkg/podsource"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

const testNodeName = "node-1"

// testKubelet is a Kubelet whose pod lifecycle was made by newPodLifecycle, as the pod-lifecycle
// step makes it, over the fake CRI runtime (in-process, on a real socket) and client-go's fake
// clientset, with a fake clock. Only the pod sources and the pod workers run; the test turns
// the syncLoop (syncLoopIteration) and PLEG (Relist) itself, one turn at a time.
type testKubelet struct {
	k      *Kubelet
	client *clientsetfake.Clientset
	clock  *testingclock.FakeClock
	ctx    context.Context
	root   string
	// housekeepingCh gets a tick when housekeep is called.
	housekeepingCh chan time.Time
}

// newTestKubelet makes a Kubelet on the fake runtime and a fake API server holding objects (like
// upstream kubelet_test.go newTestKubelet), and runs its pod sources and pod workers until the
// test ends.
func newTestKubelet(t *testing.T, objects ...runtime.Object) *testKubelet {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	root, err := os.MkdirTemp("", "kl") // short: unix socket paths are limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))

	socket := filepath.Join(root, "cri.sock")
	rt, err := fakeruntime.New(fakeruntime.Config{Socket: socket, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	var running []chan struct{}
	goRun := func(run func(context.Context)) {
		done := make(chan struct{})
		running = append(running, done)
		go func() { defer close(done); run(ctx) }()
	}
	goRun(func(ctx context.Context) {
		if err := rt.Serve(ctx); err != nil {
			t.Errorf("fake runtime: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		for _, done := range running {
			<-done
		}
		_ = os.RemoveAll(root)
	})
	<-rt.Ready()
	cri, err := remote.Dial(ctx, "unix://"+socket, 10*time.Second)
	if err != nil {
		t.Fatalf("connect to the fake runtime: %v", err)
	}
	t.Cleanup(func() { _ = cri.Close() })

	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o := options.AddFlags(fs)
	if err := fs.Parse([]string{"--root-dir", root, "--hostname-override", testNodeName, "--node-ip", "10.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(fs); err != nil {
		t.Fatal(err)
	}
	k, err := New(Config{Options: o, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	// What the steps before pod-lifecycle would have made.
	client := clientsetfake.NewClientset(objects...)
	k.client, k.recorder, k.cri = client, record.NewFakeRecorder(1000), cri
	if k.podLifecycle, err = k.newPodLifecycle(); err != nil {
		t.Fatal(err)
	}
	goRun(k.podSources.Run)
	goRun(k.podWorkers.Run)
	return &testKubelet{k: k, client: client, clock: clk, ctx: ctx, root: root, housekeepingCh: make(chan time.Time, 1)}
}

// iterate runs one turn of the syncLoop, listening only to the channels asked for, so the test
// knows which channel the turn takes.
func (tk *testKubelet) iterate(t *testing.T, configCh, plegCh, housekeepingCh bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tk.ctx, 10*time.Second)
	defer cancel()
	var config <-chan podsource.PodUpdate
	var events <-chan *pleg.PodLifecycleEvent
	var housekeeping <-chan time.Time
	if configCh {
		config = tk.k.podSources.Updates()
	}
	if plegCh {
		events = tk.k.pleg.Watch()
	}
	if housekeepingCh {
		housekeeping = tk.housekeepingCh
	}
	if !tk.k.syncLoopIteration(ctx, config, events, nil, housekeeping) {
		t.Fatalf("the syncLoop turn got nothing in 10 s (configCh %v, plegCh %v, housekeepingCh %v)", configCh, plegCh, housekeepingCh)
	}
}

// housekeep runs one turn of the syncLoop on housekeepingCh.
func (tk *testKubelet) housekeep(t *testing.T) {
	t.Helper()
	tk.housekeepingCh <- tk.clock.Now()
	tk.iterate(t, false, false, true)
}

// relist is one turn of PLEG, a second later than the last, so it is newer than the workers'
// last sync.
func (tk *testKubelet) relist() {
	tk.clock.Step(time.Second)
	tk.k.pleg.(*pleg.GenericPLEG).Relist(tk.ctx)
}

// relistUntil turns PLEG until cond holds.
func (tk *testKubelet) relistUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tk.waitFor(t, what, func() bool {
		tk.relist()
		return cond()
	})
}

// waitFor waits until cond holds (the pod workers run on their own goroutines).
func (tk *testKubelet) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(tk.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// runtimePod reports whether the runtime has the pod, and whether anything of it runs.
func (tk *testKubelet) runtimePod(t *testing.T, uid types.UID) (exists, running bool) {
	t.Helper()
	pods, err := tk.k.containerRuntime.GetPods(tk.ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, rp := range pods {
		if rp.ID == uid {
			return true, isRunning(rp)
		}
	}
	return false, false
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"), CreationTimestamp: metav1.Now()},
		Spec: corev1.PodSpec{
			NodeName:   testNodeName,
			Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}, ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
}

// A pod's life through the syncLoop, as upstream's Kubelet drives it: configCh ADD →
// HandlePodAdditions → its worker's SyncPod starts it; PLEG sees the container start → Running;
// the API server deletes it (configCh DELETE) → SyncTerminatingPod stops it and
// SyncTerminatedPod gives it its terminal phase; the object goes (REMOVE); housekeeping
// (HandlePodCleanups) removes the worker, the pod's status and what the runtime kept of it.
func TestSyncLoopAddStartDeleteCleanup(t *testing.T) {
	pod := testPod("web")
	tk := newTestKubelet(t, pod)
	k := tk.k

	// ADD: admitted, handed to a new worker.
	tk.iterate(t, true, false, false)
	if _, ok := k.podManager.GetPodByUID(pod.UID); !ok {
		t.Fatal("after configCh ADD the pod manager does not have the pod")
	}
	if st, ok := k.podWorkers.State(pod.UID); !ok || st != podworkers.Syncing {
		t.Fatalf("after configCh ADD the pod's worker is %v (known %v), want syncing", st, ok)
	}

	// Start: the worker waits for PLEG's first relist, then SyncPod starts the container.
	tk.relistUntil(t, "the container to run", func() bool { _, running := tk.runtimePod(t, pod.UID); return running })
	tk.relist()                       // one that surely saw it: ContainerStarted on plegCh
	tk.iterate(t, false, true, false) // plegCh: the started container → HandlePodSyncs
	tk.relistUntil(t, "the status to say Running", func() bool {
		st, ok := k.statusManager.GetPodStatus(pod.UID)
		return ok && st.Phase == corev1.PodRunning
	})

	// DELETE: the API server sets the deletion timestamp; the worker stops the pod.
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: tk.clock.Now()}
	deleting.DeletionGracePeriodSeconds = ptr.To[int64](0)
	if _, err := tk.client.CoreV1().Pods(pod.Namespace).Update(tk.ctx, deleting, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tk.iterate(t, true, false, false)
	tk.relistUntil(t, "the worker to finish the pod", func() bool {
		st, ok := k.podWorkers.State(pod.UID)
		return ok && st == podworkers.Finished
	})
	if _, running := tk.runtimePod(t, pod.UID); running {
		t.Error("the worker finished the pod, but the runtime still runs part of it")
	}
	if st, _ := k.statusManager.GetPodStatus(pod.UID); st.Phase != corev1.PodFailed && st.Phase != corev1.PodSucceeded {
		t.Errorf("a stopped pod's status has phase %q, want a terminal one", st.Phase)
	}

	// REMOVE: the object is gone from the API server.
	if err := tk.client.CoreV1().Pods(pod.Namespace).Delete(tk.ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tk.iterate(t, true, false, false)
	if _, ok := k.podManager.GetPodByUID(pod.UID); ok {
		t.Fatal("after configCh REMOVE the pod manager still has the pod")
	}

	// Cleanup: housekeeping forgets the pod and removes its sandbox and container.
	tk.housekeep(t)
	if _, known := k.podWorkers.State(pod.UID); known || k.podWorkers.Count() != 0 {
		t.Errorf("after housekeeping: %d workers (the pod's known: %v), want none", k.podWorkers.Count(), known)
	}
	if _, ok := k.statusManager.GetPodStatus(pod.UID); ok {
		t.Error("after housekeeping the status manager still has the pod's status")
	}
	if exists, _ := tk.runtimePod(t, pod.UID); exists {
		t.Error("after housekeeping the runtime still has the pod's sandbox or containers")
	}
}

// Upstream HandlePodCleanups: a pod the runtime runs that nobody desires and no worker knows
// (orphaned by a restart) is not stopped by housekeeping itself but handed to the pod workers
// as a SyncPodKill with its RunningPod; its worker stops it (SyncTerminatingRuntimePod), and the
// next housekeeping removes the worker and what the runtime kept of the pod.
func TestHousekeepingStopsOrphansThroughThePodWorkers(t *testing.T) {
	tk := newTestKubelet(t)
	k := tk.k
	tk.waitFor(t, "the pod sources' first list", k.podSources.AllSourcesReady)

	orphan := testPod("orphan")
	status, err := k.containerRuntime.GetPodStatus(tk.ctx, orphan.UID, orphan.Name, orphan.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.containerRuntime.SyncPod(tk.ctx, orphan, status).Err(); err != nil {
		t.Fatal(err)
	}
	if _, running := tk.runtimePod(t, orphan.UID); !running {
		t.Fatal("the orphan does not run in the runtime")
	}

	tk.housekeep(t)
	if st, known := k.podWorkers.State(orphan.UID); !known || (st != podworkers.Terminating && st != podworkers.Finished) {
		t.Fatalf("after housekeeping the orphan's worker is %v (known %v), want terminating or finished", st, known)
	}
	tk.waitFor(t, "the orphan's worker to finish", func() bool {
		st, _ := k.podWorkers.State(orphan.UID)
		return st == podworkers.Finished
	})
	if _, running := tk.runtimePod(t, orphan.UID); running {
		t.Error("the orphan's worker finished, but the runtime still runs part of it")
	}

	tk.housekeep(t)
	if k.podWorkers.Count() != 0 {
		t.Errorf("after the second housekeeping %d workers, want none", k.podWorkers.Count())
	}
	if exists, _ := tk.runtimePod(t, orphan.UID); exists {
		t.Error("after the second housekeeping the runtime still has the orphan")
	}
}

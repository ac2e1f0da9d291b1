package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/pkg/options"
	"github.com/minikubelet/minikubelet/pkg/pleg"
	"github.com/minikubelet/minikubelet/pkg/podsource"
)

const testNodeName = "node-1"

// testKubelet is a Kubelet whose pod lifecycle was made by newPodLifecycle, as the pod-lifecycle
// step makes it, over the fake CRI runtime (in-process, on a real socket) and client-go's fake
// clientset, with a fake clock. No control plane, no goroutine of the syncLoop: the pod sources,
// the pod workers, the status manager and the prober run on their own goroutines as in the
// kubelet, but the test turns the syncLoop (syncLoopIteration) and PLEG (Relist) itself, and
// moves the clock. Its vocabulary, from the smallest step to the largest:
//
//	iterate(t, configCh)    one turn of the syncLoop on the channels named
//	turn(t)                 "now": PLEG relists, the syncLoop takes everything waiting
//	settle(t, what, cond)   turns until cond holds; the clock barely moves (1 ms a turn)
//	advance(t, d)           d passes at once (timers fire: probes, programs' sleeps, back-offs), then a turn
//	live(t, what, cond)     seconds pass, one a turn, until cond holds
//	housekeep(t)            one turn of the syncLoop on housekeepingCh (HandlePodCleanups)
//
// and what it observes: apiPod (the pod as the fake API server has it, written by the status
// manager), runtimePod (the fake runtime), k.podWorkers.State (the worker), events and hasEvent.
type testKubelet struct {
	k      *Kubelet
	client *clientsetfake.Clientset
	clock  *testingclock.FakeClock
	rt     *fakeruntime.Runtime // the runtime itself: tk.rt.Inject breaks it as `minikubelet fake-runtime` does
	ctx    context.Context
	root   string
	// syncCh and housekeepingCh are the syncLoop's tickers, ticked by the test.
	syncCh, housekeepingCh chan time.Time
	// recorder holds the Events the kubelet recorded; events reads them.
	recorder *record.FakeRecorder
	seen     []string // the Events read so far

	mu      sync.Mutex
	deleted map[string]*corev1.Pod // namespace/name → the pod as the API had it when deleted
}

// newTestKubelet makes a Kubelet on the fake runtime and a fake API server holding objects (like
// upstream kubelet_test.go newTestKubelet), and runs its pod sources, pod workers, status
// manager and prober until the test ends.
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
	recorder := record.NewFakeRecorder(1000)
	k.client, k.recorder, k.cri = client, recorder, cri
	if k.podLifecycle, err = k.newPodLifecycle(); err != nil {
		t.Fatal(err)
	}
	tk := &testKubelet{k: k, client: client, clock: clk, rt: rt, ctx: ctx, root: root, recorder: recorder,
		syncCh: make(chan time.Time, 1), housekeepingCh: make(chan time.Time, 1), deleted: map[string]*corev1.Pod{}}
	// Keep what the API had of a pod when it was deleted: its last status. (Reactors are added
	// before anything calls the client: the fake's reactor chain is not safe to change later.)
	client.PrependReactor("delete", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		del := action.(k8stesting.DeleteAction)
		if obj, err := client.Tracker().Get(del.GetResource(), del.GetNamespace(), del.GetName()); err == nil {
			tk.mu.Lock()
			tk.deleted[del.GetNamespace()+"/"+del.GetName()] = obj.(*corev1.Pod)
			tk.mu.Unlock()
		}
		return false, nil, nil // the tracker deletes it
	})
	// What the steps after pod-lifecycle start, in their order, but for PLEG and the syncLoop.
	goRun(k.podWorkers.Run)
	goRun(k.statusManager.Run)
	goRun(k.probes.manager.Run)
	goRun(k.podSources.Run)
	return tk
}

// deletedPod is the pod as the API had it when it was deleted (nil: not deleted).
func (tk *testKubelet) deletedPod(pod *corev1.Pod) *corev1.Pod {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return tk.deleted[pod.Namespace+"/"+pod.Name]
}

// channel names the syncLoop's channels a turn listens to (iterate). The probe results'
// channels are always listened to: syncLoopIteration reads them from the Kubelet.
type channel int

const (
	configCh channel = 1 << iota
	plegCh
	syncCh
	housekeepingCh
)

// iterate runs one turn of the syncLoop, listening only to the channels named, so the test
// knows which channel the turn takes.
func (tk *testKubelet) iterate(t *testing.T, on channel) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tk.ctx, 10*time.Second)
	defer cancel()
	var config <-chan podsource.PodUpdate
	var events <-chan *pleg.PodLifecycleEvent
	var sync, housekeeping <-chan time.Time
	if on&configCh != 0 {
		config = tk.k.podSources.Updates()
	}
	if on&plegCh != 0 {
		events = tk.k.pleg.Watch()
	}
	if on&syncCh != 0 {
		sync = tk.syncCh
	}
	if on&housekeepingCh != 0 {
		housekeeping = tk.housekeepingCh
	}
	if !tk.k.syncLoopIteration(ctx, config, events, sync, housekeeping) {
		t.Fatalf("the syncLoop turn got nothing in 10 s (channels %b)", on)
	}
}

// waiting names the syncLoop's channels that hold something (the probes' included).
func (tk *testKubelet) waiting() (on channel, probes bool) {
	if len(tk.k.podSources.Updates()) > 0 {
		on |= configCh
	}
	if len(tk.k.pleg.Watch()) > 0 {
		on |= plegCh
	}
	if len(tk.syncCh) > 0 {
		on |= syncCh
	}
	p := tk.k.probes
	return on, len(p.liveness.Updates())+len(p.readiness.Updates())+len(p.startup.Updates()) > 0
}

// turn is the kubelet's "now": PLEG relists, syncCh ticks, and the syncLoop takes every update,
// event and probe result waiting on its channels, in the order its select picks them.
func (tk *testKubelet) turn(t *testing.T) {
	t.Helper()
	tk.clock.Step(time.Millisecond) // a relist newer than the workers' last sync
	tk.k.pleg.(*pleg.GenericPLEG).Relist(tk.ctx)
	select {
	case tk.syncCh <- tk.clock.Now(): // pods whose resync or retry is due
	default:
	}
	for {
		on, probes := tk.waiting()
		if on == 0 && !probes {
			return
		}
		tk.iterate(t, on)
	}
}

// settle turns until cond holds; the clock moves 1 ms a turn, so nothing that waits on it (a
// back-off, a probe period, a program's sleep) comes due meanwhile.
func (tk *testKubelet) settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tk.waitFor(t, what, func() bool {
		tk.turn(t)
		return cond()
	})
}

// advance lets d pass at once: every timer due by then fires (probe periods, the programs'
// sleeps, grace periods), back-offs expire; then a turn.
func (tk *testKubelet) advance(t *testing.T, d time.Duration) {
	t.Helper()
	tk.clock.Step(d)
	tk.turn(t)
}

// live lets seconds pass, one a turn, until cond holds: the kubelet as it runs, for what needs
// time (probes) but does not need to be caught in a window.
func (tk *testKubelet) live(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tk.waitFor(t, what, func() bool {
		tk.advance(t, time.Second)
		return cond()
	})
}

// housekeep runs one turn of the syncLoop on housekeepingCh.
func (tk *testKubelet) housekeep(t *testing.T) {
	t.Helper()
	tk.housekeepingCh <- tk.clock.Now()
	tk.iterate(t, housekeepingCh)
}

// waitFor waits until cond holds (the pod workers, the status manager and the prober run on
// their own goroutines), polling every 2 ms for at most 10 s.
func (tk *testKubelet) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(tk.ctx, 2*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// apiPod is the pod as the fake API server has it (nil: gone): its status is what the status
// manager wrote.
func (tk *testKubelet) apiPod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	got, err := tk.client.CoreV1().Pods(pod.Namespace).Get(tk.ctx, pod.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// apiContainer is the status of the pod's first container in the API (zero before there is one).
func (tk *testKubelet) apiContainer(t *testing.T, pod *corev1.Pod) corev1.ContainerStatus {
	t.Helper()
	if got := tk.apiPod(t, pod); got != nil && len(got.Status.ContainerStatuses) > 0 {
		return got.Status.ContainerStatuses[0]
	}
	return corev1.ContainerStatus{}
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

// exec runs cmd in the pod's running container, as `kubectl exec` would.
func (tk *testKubelet) exec(t *testing.T, pod *corev1.Pod, cmd ...string) {
	t.Helper()
	id := strings.TrimPrefix(tk.apiContainer(t, pod).ContainerID, tk.k.runtimeName+"://")
	resp, err := tk.k.cri.Runtime.ExecSync(tk.ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: 1})
	if err != nil || resp.GetExitCode() != 0 {
		t.Fatalf("exec %v in %s: exit code %d, %v", cmd, id, resp.GetExitCode(), err)
	}
}

// events are the Events recorded so far ("Warning BackOff Back-off restarting …"), in order.
func (tk *testKubelet) events() []string {
	for {
		select {
		case e := <-tk.recorder.Events:
			tk.seen = append(tk.seen, e)
		default:
			return tk.seen
		}
	}
}

// hasEvent reports whether an Event of that reason was recorded.
func (tk *testKubelet) hasEvent(reason string) bool {
	for _, e := range tk.events() {
		if _, rest, _ := strings.Cut(e, " "); strings.HasPrefix(rest, reason+" ") {
			return true
		}
	}
	return false
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

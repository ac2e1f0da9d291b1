package volumemanager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// The reconciler sets up what pods need — an emptyDir in the pod's directory, a hostPath PV at
// its path, read-only as the claim asks — and, once the pod's containers are gone, tears the
// pod's own directories down; housekeeping then removes the pod's directory, but never that of
// a pod whose volumes are still set up.
func TestReconcilerSetsUpAndTearsDown(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	data := filepath.Join(t.TempDir(), "data")
	tm := newTestManager(t, boundClaim("data", "pv-data"), hostPathPV("pv-data", "data", data))
	pod := testPod("uid-1", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		claimVolume("data", "data", true))
	tm.addPod(pod)
	tm.turn(ctx)

	mounted := tm.GetMountedVolumesForPod("uid-1")
	scratch := filepath.Join(tm.root, "pods", "uid-1", "volumes", "kubernetes.io~empty-dir", "scratch")
	if got := mounted["scratch"]; got.HostPath != scratch || got.ReadOnly {
		t.Errorf("scratch = %+v, want %s read-write", got, scratch)
	}
	if got := mounted["data"]; got.HostPath != data || !got.ReadOnly {
		t.Errorf("data = %+v, want %s read-only (the claim's readOnly)", got, data)
	}
	if fi, err := os.Stat(data); err != nil || !fi.IsDir() {
		t.Errorf("the PV's DirectoryOrCreate path was not made: %v", err)
	}
	if err := tm.CleanupOrphanedPodDirs(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scratch); err != nil {
		t.Fatalf("housekeeping removed a directory whose volumes are set up: %v", err)
	}

	tm.pods.stopped["uid-1"] = true
	tm.turn(ctx)
	if got := tm.GetMountedVolumesForPod("uid-1"); len(got) != 0 {
		t.Errorf("set up after the pod stopped: %v", got)
	}
	if _, err := os.Stat(scratch); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the emptyDir was not torn down: %v", err)
	}
	if _, err := os.Stat(data); err != nil {
		t.Errorf("the PV's data went with the pod: %v", err)
	}
	if err := tm.CleanupOrphanedPodDirs(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tm.root, "pods", "uid-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("housekeeping kept the directory of a pod that is gone: %v", err)
	}
}

// A failed set-up is tried again on upstream's back-off (0.5 s, then doubling), not on every
// turn; the API server lagging behind the pod's binding is not an Event for 15 s, a lasting
// failure is, with upstream's message; a success clears the back-off.
func TestReconcilerBackoffAndEvents(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tm := newTestManager(t)
	tm.secretErr = apierrors.NewForbidden(corev1.Resource("secrets"), "creds", errors.New("no relationship found between node 'n1' and this object"))
	tm.addPod(testPod("uid-1", corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}))
	calls := func() int { tm.mu.Lock(); defer tm.mu.Unlock(); return tm.secretCalls }

	var elapsed time.Duration
	for i, wait := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		tm.turn(ctx)
		if got := calls(); got != i+1 {
			t.Fatalf("after %s: %d attempts, want %d", elapsed, got, i+1)
		}
		tm.clk.Step(wait - time.Millisecond)
		tm.turn(ctx) // still in back-off: no attempt
		tm.clk.Step(time.Millisecond)
		elapsed += wait
		if ev := tm.events(); len(ev) != 0 {
			t.Fatalf("after %s: Events %q while the API server may lag", elapsed, ev)
		}
	}
	tm.turn(ctx) // 15.5 s: a lasting Forbidden is real
	ev := tm.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], `Warning FailedMount MountVolume.SetUp failed for volume "creds" : `) {
		t.Fatalf("after %s: Events %q, want upstream's FailedMount", elapsed, ev)
	}
	tm.secretErr = nil
	tm.clk.Step(16 * time.Second)
	tm.turn(ctx)
	if _, ok := tm.GetMountedVolumesForPod("uid-1")["creds"]; !ok {
		t.Fatal("the volume is not set up once the secret is readable")
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.backoff.IsInBackOffSinceUpdate(opKey("uid-1", "creds"), tm.clk.Now()) {
		t.Error("a success left the volume in back-off")
	}
}

// A PV whose nodeAffinity does not match the node's labels is refused with upstream's message.
func TestReconcilerChecksNodeAffinity(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pv := hostPathPV("pv-local", "data", t.TempDir())
	pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: pv.Spec.HostPath.Path}}
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-b"}}}}}}}
	tm := newTestManager(t, boundClaim("data", "pv-local"), pv)
	tm.addPod(testPod("uid-1", claimVolume("data", "data", false)))
	tm.turn(ctx)
	want := `Warning FailedMount MountVolume.NodeAffinity check failed for volume "pv-local" : no matching NodeSelectorTerms`
	if ev := tm.events(); len(ev) != 1 || ev[0] != want {
		t.Fatalf("Events %q, want %q", ev, want)
	}
	if len(tm.GetMountedVolumesForPod("uid-1")) != 0 {
		t.Error("a PV of another node was set up")
	}
	pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"node-a"}
	if _, err := tm.cfg.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tm.ReprocessPod("uid-1") // a pod sync
	tm.clk.Step(time.Second)
	tm.turn(ctx)
	if got := tm.GetMountedVolumesForPod("uid-1")["data"]; got.HostPath != pv.Spec.Local.Path {
		t.Errorf("a local PV of this node: %+v, want its path", got)
	}
}

// WaitForAttachAndMount returns the populator's errors at once in upstream's shape, waits while
// a volume is being set up, and asks for a remount, which brings a changed Secret to the files.
func TestWaitForAttachAndMount(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tm := newTestManager(t)
	pod := testPod("uid-1", corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
		claimVolume("data", "nope", false))
	tm.addPod(pod)
	tm.turn(ctx)
	err := tm.WaitForAttachAndMount(ctx, pod)
	want := `unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC shop/nope: failed to fetch PVC from API server: persistentvolumeclaims "nope" not found`
	if err == nil || err.Error() != want {
		t.Fatalf("WaitForAttachAndMount = %v, want %s", err, want)
	}

	ok := testPod("uid-2", corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}})
	tm.addPod(ok)
	done := make(chan error, 1)
	go func() { done <- tm.WaitForAttachAndMount(ctx, ok) }()
	for !tm.clk.HasWaiters() { // it polls: the volume is not set up yet
		time.Sleep(time.Millisecond)
	}
	tm.turn(ctx)
	tm.clk.Step(podAttachAndMountRetryInterval)
	if err := <-done; err != nil {
		t.Fatalf("WaitForAttachAndMount once set up = %v", err)
	}
	file := filepath.Join(tm.root, "pods", "uid-2", "volumes", "kubernetes.io~secret", "creds", "k")
	tm.mu.Lock()
	tm.secret = "v2"
	tm.mu.Unlock()
	if err := tm.WaitForAttachAndMount(ctx, ok); err != nil { // a pod sync: asks for the remount
		t.Fatal(err)
	}
	tm.turn(ctx)
	if got, err := os.ReadFile(file); err != nil || string(got) != "v2" {
		t.Errorf("secret file = %q, %v after a pod sync, want the changed Secret", got, err)
	}
}

// After 2 min 3 s without its volumes, WaitForAttachAndMount gives up with
// context.DeadlineExceeded (upstream's wait.Interrupted: SyncPod records no Event for it).
func TestWaitForAttachAndMountTimesOut(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tm := newTestManager(t)
	pod := testPod("uid-1", corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}})
	done := make(chan error, 1)
	go func() { done <- tm.WaitForAttachAndMount(ctx, pod) }()
	start := tm.clk.Now()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		default:
			if tm.clk.HasWaiters() {
				tm.clk.Step(podAttachAndMountRetryInterval)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if waited := tm.clk.Since(start); waited < podAttachAndMountTimeout {
		t.Errorf("gave up after %s, want 2m3s", waited)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "unmounted volumes=[creds], unattached volumes=[], failed to process volumes=[creds]: ") {
		t.Fatalf("WaitForAttachAndMount = %v, want a timeout naming creds", err)
	}
}

// The journal tells a volume's story once: setUp when first set up (a remount on a later pod
// sync is not recorded again), tearDown under the pod's name after the pod is gone, and
// removeOrphan when housekeeping removes the pod's directory.
func TestReconcilerJournal(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	tm := newTestManager(t)
	tm.addPod(testPod("uid-1", corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}))
	tm.turn(ctx)
	tm.ReprocessPod("uid-1") // a pod sync: the secret volume is set up again
	tm.turn(ctx)
	tm.pods.stopped["uid-1"] = true
	tm.turn(ctx)
	if err := tm.CleanupOrphanedPodDirs(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tm.journal.Read(0, journal.Filter{Source: journal.SourceVolume}).Events {
		got = append(got, e.Kind+" "+e.Pod+" "+e.UID+" "+e.Fields["volume"]+" "+e.Fields["type"])
	}
	slices.Sort(got[:2])
	slices.Sort(got[2:4])
	want := []string{
		"setUp shop/web-0 uid-1 scratch emptyDir", "setUp shop/web-0 uid-1 token secret",
		"tearDown shop/web-0 uid-1 scratch ", "tearDown shop/web-0 uid-1 token ",
		"removeOrphan  uid-1  ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("journal:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package volumemanager

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/pkg/volume"
)

// fakePods is the pod manager and the pod workers in one: the pods that should run, and those
// whose containers are gone.
type fakePods struct {
	mu      sync.Mutex
	pods    []*corev1.Pod
	stopped map[types.UID]bool
}

func (f *fakePods) GetPods() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods
}
func (f *fakePods) ShouldPodContainersBeTerminating(uid types.UID) bool { return f.isStopped(uid) }
func (f *fakePods) ShouldPodRuntimeBeRemoved(uid types.UID) bool        { return f.isStopped(uid) }
func (f *fakePods) isStopped(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stopped[uid]
}

// testManager is a Manager over a temporary root, the objects of a fake clientset, a fake clock
// and secrets that a test may change or make fail.
type testManager struct {
	*Manager
	root     string
	clk      *clocktesting.FakeClock
	recorder *record.FakeRecorder
	pods     *fakePods
	journal  *journal.Journal

	mu          sync.Mutex
	secret      string // the content of every Secret's key "k"
	secretErr   error
	secretCalls int
}

func newTestManager(t *testing.T, objects ...runtime.Object) *testManager {
	t.Helper()
	tm := &testManager{root: t.TempDir(), clk: clocktesting.NewFakeClock(time.Now()), recorder: record.NewFakeRecorder(100),
		pods: &fakePods{stopped: map[types.UID]bool{}}, secret: "v1"}
	tm.journal = journal.NewWithClock(journal.DefaultSize, tm.clk)
	projector, err := volume.New(volume.Config{RootDir: tm.root, Clock: tm.clk,
		GetSecret: func(context.Context, string, string) (*corev1.Secret, error) {
			tm.mu.Lock()
			defer tm.mu.Unlock()
			tm.secretCalls++
			return &corev1.Secret{Data: map[string][]byte{"k": []byte(tm.secret)}}, tm.secretErr
		},
		GetConfigMap: func(context.Context, string, string) (*corev1.ConfigMap, error) { return nil, nil },
		GetServiceAccountToken: func(context.Context, string, string, *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
			return nil, errors.New("no tokens here")
		}})
	if err != nil {
		t.Fatal(err)
	}
	tm.Manager, err = New(Config{RootDir: tm.root, Projector: projector, Client: fake.NewClientset(objects...),
		Pods: tm.pods, PodState: tm.pods, Recorder: tm.recorder, Clock: tm.clk, Journal: tm.journal.For(journal.SourceVolume),
		NodeLabels: func(context.Context) (map[string]string, error) {
			return map[string]string{corev1.LabelHostname: "node-a"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// turn is one turn of each loop, waiting for the operations it started.
func (tm *testManager) turn(ctx context.Context) {
	tm.populateOnce(ctx)
	tm.reconcileOnce(ctx)
	tm.ops.Wait()
}

func (tm *testManager) addPod(pod *corev1.Pod) {
	tm.pods.mu.Lock()
	defer tm.pods.mu.Unlock()
	tm.pods.pods = append(tm.pods.pods, pod)
}

// events drains the recorded Events.
func (tm *testManager) events() []string {
	var out []string
	for {
		select {
		case e := <-tm.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func testPod(uid string, vols ...corev1.Volume) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: types.UID(uid)},
		Spec: corev1.PodSpec{Volumes: vols}}
	c := corev1.Container{Name: "app"}
	for _, v := range vols {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/" + v.Name})
	}
	pod.Spec.Containers = []corev1.Container{c}
	return pod
}

func claimVolume(name, claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}}
}

func boundClaim(name, pv string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("claim-" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
}

func hostPathPV(name, claim, path string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
			ClaimRef:               &corev1.ObjectReference{Namespace: "shop", Name: claim, UID: types.UID("claim-" + claim)}}}
}

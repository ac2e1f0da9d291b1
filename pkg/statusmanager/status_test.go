package statusmanager

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

func cond(t corev1.PodConditionType, s corev1.ConditionStatus, at time.Time) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.NewTime(at)}
}

func running(name, id string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, ContainerID: id, Ready: ready,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}
}

func terminated(name string, exitCode int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: "Completed"}}}
}

func waiting(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
}

// Upstream updateLastTransitionTime: a condition keeps its lastTransitionTime while its status
// stays the same, and gets "now" when it is new or its status flips.
func TestUpdateTransitionTimes(t *testing.T) {
	tests := []struct {
		name string
		old  []corev1.PodCondition
		new  corev1.PodCondition
		want time.Time
	}{
		{"unchanged status keeps the old time", []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, t0)}, cond(corev1.PodReady, corev1.ConditionTrue, t1), t0},
		{"changed status gets now", []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse, t0)}, cond(corev1.PodReady, corev1.ConditionTrue, time.Time{}), t1},
		{"new condition gets now", nil, cond(corev1.PodReady, corev1.ConditionTrue, time.Time{}), t1},
		{"other types do not count", []corev1.PodCondition{cond(corev1.ContainersReady, corev1.ConditionTrue, t0)}, cond(corev1.PodReady, corev1.ConditionTrue, t0), t1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := corev1.PodStatus{Conditions: []corev1.PodCondition{tc.new}}
			updateTransitionTimes(&corev1.PodStatus{Conditions: tc.old}, &status, metav1.NewTime(t1))
			if got := status.Conditions[0].LastTransitionTime.Time; !got.Equal(tc.want) {
				t.Errorf("lastTransitionTime = %s, want %s", got, tc.want)
			}
		})
	}
}

// Upstream normalizeStatus and updateStatusInternal: times are truncated to seconds as the API
// stores them, and startTime is set once and then never moves.
func TestPrepareStatus(t *testing.T) {
	now := t1.Add(700 * time.Millisecond)
	t.Run("first status gets startTime now, truncated", func(t *testing.T) {
		got := prepareStatus(&corev1.PodStatus{}, corev1.PodStatus{
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastProbeTime: metav1.NewTime(now)}},
			ContainerStatuses: []corev1.ContainerStatus{running("c", "fake://c", true)},
		}, now)
		if !got.StartTime.Time.Equal(t1) {
			t.Errorf("startTime = %s, want %s", got.StartTime, t1)
		}
		if c := got.Conditions[0]; !c.LastTransitionTime.Time.Equal(t1) || !c.LastProbeTime.Time.Equal(t1) {
			t.Errorf("condition times = %s/%s, want both %s", c.LastTransitionTime, c.LastProbeTime, t1)
		}
	})
	t.Run("startTime never moves", func(t *testing.T) {
		later := metav1.NewTime(t1)
		got := prepareStatus(&corev1.PodStatus{StartTime: &metav1.Time{Time: t0}}, corev1.PodStatus{StartTime: &later}, now)
		if !got.StartTime.Time.Equal(t0) {
			t.Errorf("startTime = %s, want the first one %s", got.StartTime, t0)
		}
	})
	t.Run("caller's status is not modified", func(t *testing.T) {
		in := corev1.PodStatus{Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, now)}}
		prepareStatus(&corev1.PodStatus{}, in, now)
		if !in.Conditions[0].LastTransitionTime.Time.Equal(now) {
			t.Error("prepareStatus changed its input")
		}
	})
}

// Upstream isPodStatusByKubeletEqual: a status that differs only in lastProbeTime is not worth a
// write; nil and empty lists are equal (a JSON round trip turns one into the other).
func TestStatusChanged(t *testing.T) {
	base := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, t0)}}
	probed := *base.DeepCopy()
	probed.Conditions[0].LastProbeTime = metav1.NewTime(t1)
	flipped := *base.DeepCopy()
	flipped.Conditions[0].Status = corev1.ConditionFalse
	failed := *base.DeepCopy()
	failed.Phase = corev1.PodFailed
	tests := []struct {
		name     string
		old, new corev1.PodStatus
		want     bool
	}{
		{"same", base, *base.DeepCopy(), false},
		{"only lastProbeTime differs", base, probed, false},
		{"nil and empty lists", corev1.PodStatus{}, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{}}, false},
		{"condition status", base, flipped, true},
		{"phase", base, failed, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := statusChanged(tc.old, tc.new); got != tc.want {
				t.Errorf("statusChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// Upstream mergePodStatus: conditions the kubelet does not own (readiness gates, a controller's
// DisruptionTarget) are the API's, even when the cache holds an older copy of one; the kubelet's
// own conditions (PodScheduled included) are the cache's.
func TestMergeStatus(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	api := corev1.PodStatus{
		NominatedNodeName: "n2",
		Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue, t0), cond(gate, corev1.ConditionFalse, t1),
			cond(corev1.PodReady, corev1.ConditionFalse, t0), cond(corev1.DisruptionTarget, corev1.ConditionTrue, t1)},
	}
	cached := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(gate, corev1.ConditionTrue, t0),
		cond(corev1.PodReady, corev1.ConditionTrue, t1), cond(corev1.ContainersReady, corev1.ConditionTrue, t1)}}
	got := mergeStatus(api, cached)
	want := []corev1.PodCondition{cond(gate, corev1.ConditionFalse, t1), cond(corev1.DisruptionTarget, corev1.ConditionTrue, t1),
		cond(corev1.PodReady, corev1.ConditionTrue, t1), cond(corev1.ContainersReady, corev1.ConditionTrue, t1)}
	if !reflect.DeepEqual(got.Conditions, want) {
		t.Errorf("conditions = %+v, want %+v", got.Conditions, want)
	}
	if got.Phase != corev1.PodRunning || got.NominatedNodeName != "n2" {
		t.Errorf("phase %q nominatedNodeName %q, want Running from the cache and n2 from the API", got.Phase, got.NominatedNodeName)
	}
	if len(api.Conditions) != 4 || len(cached.Conditions) != 3 {
		t.Error("mergeStatus changed its input")
	}
}

// Upstream mergePodStatus, PodConditionSharedByKubelet: the kubelet's DisruptionTarget (an
// eviction's) replaces the API's only with the move to a terminal phase, once no container runs.
func TestMergeStatusDisruptionTarget(t *testing.T) {
	ours := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet"}
	stopped := []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}}
	running := []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	for _, tc := range []struct {
		name       string
		apiPhase   corev1.PodPhase
		phase      corev1.PodPhase
		containers []corev1.ContainerStatus
		want       bool
	}{
		{"to Failed, stopped", corev1.PodRunning, corev1.PodFailed, stopped, true},
		{"to Failed, still running", corev1.PodRunning, corev1.PodFailed, running, false},
		{"already Failed in the API", corev1.PodFailed, corev1.PodFailed, stopped, false},
		{"not terminal", corev1.PodRunning, corev1.PodRunning, running, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeStatus(corev1.PodStatus{Phase: tc.apiPhase}, corev1.PodStatus{Phase: tc.phase, ContainerStatuses: tc.containers,
				Conditions: []corev1.PodCondition{ours}})
			if c := findCondition(got.Conditions, corev1.DisruptionTarget); (c != nil) != tc.want {
				t.Errorf("DisruptionTarget sent: %v, want %v", c != nil, tc.want)
			}
		})
	}
}

// Upstream kubetypes.PodConditionByKubelet: the kubelet owns the conditions it computes on every
// sync, and no others.
func TestPodConditionByKubelet(t *testing.T) {
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized, corev1.ContainersReady,
		corev1.PodReadyToStartContainers, corev1.PodResizePending, corev1.PodResizeInProgress, corev1.AllContainersRestarting} {
		if !PodConditionByKubelet(c) {
			t.Errorf("%s: not owned by the kubelet, want owned", c)
		}
	}
	for _, c := range []corev1.PodConditionType{corev1.DisruptionTarget, "example.com/gate"} {
		if PodConditionByKubelet(c) {
			t.Errorf("%s: owned by the kubelet, want someone else's", c)
		}
	}
}

// Upstream statusutil.PatchPodStatus: the patch carries only what changed, plus the pod's UID as
// a precondition.
func TestStatusPatch(t *testing.T) {
	old := corev1.PodStatus{Phase: corev1.PodPending, HostIP: "10.0.0.1", Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue, t0)}}
	new := *old.DeepCopy()
	new.Phase = corev1.PodRunning
	patch, err := statusPatch("uid-1", old, new)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{"uid": "uid-1"}, "status": map[string]any{"phase": "Running"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patch = %s, want %v", patch, want)
	}
}

// Upstream TerminatePod: a container the kubelet cannot account for is reported terminated with
// ContainerStatusUnknown / 137, never as a success; the phase becomes Failed unless Succeeded.
func TestTerminatedStatus(t *testing.T) {
	tests := []struct {
		name      string
		phase     corev1.PodPhase
		wantPhase corev1.PodPhase
	}{
		{"running pod fails", corev1.PodRunning, corev1.PodFailed},
		{"pending pod fails", corev1.PodPending, corev1.PodFailed},
		{"succeeded stays", corev1.PodSucceeded, corev1.PodSucceeded},
		{"failed stays", corev1.PodFailed, corev1.PodFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := corev1.PodStatus{
				Phase:                 tc.phase,
				Conditions:            []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, t0)},
				InitContainerStatuses: []corev1.ContainerStatus{terminated("init", 0)},
				ContainerStatuses:     []corev1.ContainerStatus{running("a", "fake://a", true), waiting("b"), terminated("c", 0)},
			}
			pod := testPod("uid-1")
			pod.Spec.InitContainers = []corev1.Container{{Name: "init"}}
			pod.Spec.Containers = []corev1.Container{{Name: "a"}, {Name: "b"}, {Name: "c"}}
			got := TerminatedStatus(pod, in)
			if got.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", got.Phase, tc.wantPhase)
			}
			for _, c := range got.ContainerStatuses[:2] {
				term := c.State.Terminated
				if term == nil || term.Reason != "ContainerStatusUnknown" || term.ExitCode != 137 || term.Message != "The container could not be located when the pod was terminated" || c.State.Running != nil || c.State.Waiting != nil {
					t.Errorf("container %s state = %+v, want terminated ContainerStatusUnknown 137", c.Name, c.State)
				}
			}
			if got.ContainerStatuses[2].State.Terminated.ExitCode != 0 || got.InitContainerStatuses[0].State.Terminated.Reason != "Completed" {
				t.Error("an already terminated container was overwritten")
			}
			if c := findCondition(got.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse {
				t.Errorf("Ready = %+v, want False for a terminal pod", c)
			}
			if in.ContainerStatuses[0].State.Running == nil {
				t.Error("TerminatedStatus changed its input")
			}
		})
	}
}

// Upstream GenerateContainersReadyCondition / GeneratePodReadyCondition: Ready needs every
// container and sidecar ready; containers without a status are named as unknown. Both carry the
// pod's generation as observedGeneration.
func TestReadinessConditions(t *testing.T) {
	pod := testPod("uid-1")
	pod.Generation = 3
	pod.Spec.Containers = []corev1.Container{{Name: "a"}, {Name: "b"}}
	tests := []struct {
		name       string
		containers []corev1.ContainerStatus
		want       corev1.ConditionStatus
		wantMsg    string
	}{
		{"all ready", []corev1.ContainerStatus{running("a", "1", true), running("b", "2", true)}, corev1.ConditionTrue, ""},
		{"one unready", []corev1.ContainerStatus{running("a", "1", true), running("b", "2", false)}, corev1.ConditionFalse, "containers with unready status: [b]"},
		{"no statuses", nil, corev1.ConditionFalse, "containers with unknown status: [a b]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: tc.containers}
			cr, ready := ContainersReadyCondition(pod, st), PodReadyCondition(pod, st)
			if cr.Type != corev1.ContainersReady || ready.Type != corev1.PodReady {
				t.Errorf("types = %s, %s", cr.Type, ready.Type)
			}
			if cr.Status != tc.want || ready.Status != tc.want || cr.Message != tc.wantMsg {
				t.Errorf("ContainersReady = %+v, Ready = %+v, want %s %q", cr, ready, tc.want, tc.wantMsg)
			}
			if cr.ObservedGeneration != 3 || ready.ObservedGeneration != 3 {
				t.Errorf("observedGeneration = %d, %d, want 3", cr.ObservedGeneration, ready.ObservedGeneration)
			}
		})
	}
}

// Upstream GeneratePodReadyCondition with spec.readinessGates (KEP-580): Ready is True only when
// the containers are ready and every gate's condition is present and True; otherwise False with
// ReadinessGatesNotReady and upstream's message per gate. Unready containers win over the gates.
func TestPodReadyConditionReadinessGates(t *testing.T) {
	g1, g2 := corev1.PodConditionType("k8s.io/test-condition1"), corev1.PodConditionType("k8s.io/test-condition2")
	pod := testPod("uid-1")
	pod.Spec.Containers = []corev1.Container{{Name: "a"}}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: g1}, {ConditionType: g2}}
	tests := []struct {
		name       string
		ready      bool
		conditions []corev1.PodCondition
		want       corev1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"no gate condition yet", true, nil, corev1.ConditionFalse, ReasonReadinessGatesNotReady,
			`corresponding condition of pod readiness gate "k8s.io/test-condition1" does not exist., corresponding condition of pod readiness gate "k8s.io/test-condition2" does not exist.`},
		{"one gate True, one missing", true, []corev1.PodCondition{cond(g1, corev1.ConditionTrue, t0)}, corev1.ConditionFalse, ReasonReadinessGatesNotReady,
			`corresponding condition of pod readiness gate "k8s.io/test-condition2" does not exist.`},
		{"one gate False", true, []corev1.PodCondition{cond(g1, corev1.ConditionFalse, t0), cond(g2, corev1.ConditionTrue, t0)}, corev1.ConditionFalse, ReasonReadinessGatesNotReady,
			`the status of pod readiness gate "k8s.io/test-condition1" is not "True", but False`},
		{"all gates True", true, []corev1.PodCondition{cond(g1, corev1.ConditionTrue, t0), cond(g2, corev1.ConditionTrue, t0)}, corev1.ConditionTrue, "", ""},
		{"gates True, container unready", false, []corev1.PodCondition{cond(g1, corev1.ConditionTrue, t0), cond(g2, corev1.ConditionTrue, t0)}, corev1.ConditionFalse, ReasonContainersNotReady,
			"containers with unready status: [a]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &corev1.PodStatus{Phase: corev1.PodRunning, Conditions: tc.conditions, ContainerStatuses: []corev1.ContainerStatus{running("a", "1", tc.ready)}}
			got := PodReadyCondition(pod, st)
			if got.Type != corev1.PodReady || got.Status != tc.want || got.Reason != tc.wantReason || got.Message != tc.wantMsg {
				t.Errorf("Ready = %+v, want %s %q %q", got, tc.want, tc.wantReason, tc.wantMsg)
			}
			if cr := ContainersReadyCondition(pod, st); cr.Status != conditionOf(tc.ready) {
				t.Errorf("ContainersReady = %s, want %s: the gates do not count for it", cr.Status, conditionOf(tc.ready))
			}
		})
	}
}

// Upstream NeedToReconcilePodReadiness: a pod with readiness gates whose API Ready condition no
// longer matches its gates (someone patched one) needs a sync; pods without gates never do.
func TestNeedToReconcilePodReadiness(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	withGate := func(gateStatus, ready corev1.ConditionStatus, msg string) *corev1.Pod {
		pod := testPod("uid-1")
		pod.Spec.Containers = []corev1.Container{{Name: "a"}}
		pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
		r := cond(corev1.PodReady, ready, t0)
		r.Message = msg
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", "1", true)},
			Conditions: []corev1.PodCondition{cond(gate, gateStatus, t0), r}}
		return pod
	}
	noGates := withGate(corev1.ConditionTrue, corev1.ConditionFalse, "")
	noGates.Spec.ReadinessGates = nil
	noReady := withGate(corev1.ConditionTrue, corev1.ConditionFalse, "")
	noReady.Status.Conditions = noReady.Status.Conditions[:1]
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"gate turned True, Ready still False", withGate(corev1.ConditionTrue, corev1.ConditionFalse, `the status of pod readiness gate "example.com/gate" is not "True", but False`), true},
		{"gate turned False, Ready still True", withGate(corev1.ConditionFalse, corev1.ConditionTrue, ""), true},
		{"Ready matches the gate", withGate(corev1.ConditionTrue, corev1.ConditionTrue, ""), false},
		{"no readiness gates", noGates, false},
		{"no Ready condition yet", noReady, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedToReconcilePodReadiness(tc.pod); got != tc.want {
				t.Errorf("NeedToReconcilePodReadiness = %t, want %t", got, tc.want)
			}
		})
	}
}

func conditionOf(ok bool) corev1.ConditionStatus {
	if ok {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// The default PodDeletionSafety: a pod being deleted may be removed from the API only when none
// of its containers runs.
func TestAllContainersStopped(t *testing.T) {
	tests := []struct {
		name       string
		containers []corev1.ContainerStatus
		want       bool
	}{
		{"no containers", nil, true},
		{"terminated and waiting", []corev1.ContainerStatus{terminated("a", 0), waiting("b")}, true},
		{"one running", []corev1.ContainerStatus{terminated("a", 0), running("b", "2", false)}, false},
		{"state unknown", []corev1.ContainerStatus{{Name: "a"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := allContainersStopped(nil, corev1.PodStatus{ContainerStatuses: tc.containers}); got != tc.want {
				t.Errorf("allContainersStopped = %v, want %v", got, tc.want)
			}
		})
	}
}

// needsSync: the resync sends a newer version, rewrites a recreated mirror pod, and keeps
// checking a pod that is being deleted.
func TestNeedsSync(t *testing.T) {
	tests := []struct {
		name string
		e    entry
		want bool
	}{
		{"newer version", entry{version: 3, written: 2, writtenTo: "u"}, true},
		{"written", entry{version: 3, written: 3, writtenTo: "u"}, false},
		{"never written", entry{version: 1}, true},
		{"other API object (recreated mirror pod)", entry{version: 3, written: 3, writtenTo: "old"}, true},
		{"being deleted", entry{version: 3, written: 3, writtenTo: "u", deleting: true}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsSync(tc.e, "u"); got != tc.want {
				t.Errorf("needsSync = %v, want %v", got, tc.want)
			}
		})
	}
}

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
// DisruptionTarget) survive the kubelet's write; the kubelet's own conditions win.
func TestMergeStatus(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	api := corev1.PodStatus{
		NominatedNodeName: "n2",
		Conditions:        []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue, t0), cond(gate, corev1.ConditionTrue, t0), cond(corev1.PodReady, corev1.ConditionFalse, t0)},
	}
	cached := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, t1), cond(corev1.ContainersReady, corev1.ConditionTrue, t1)}}
	got := mergeStatus(api, cached)
	want := []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionTrue, t0), cond(gate, corev1.ConditionTrue, t0), cond(corev1.PodReady, corev1.ConditionTrue, t1), cond(corev1.ContainersReady, corev1.ConditionTrue, t1)}
	if !reflect.DeepEqual(got.Conditions, want) {
		t.Errorf("conditions = %+v, want %+v", got.Conditions, want)
	}
	if got.Phase != corev1.PodRunning || got.NominatedNodeName != "n2" {
		t.Errorf("phase %q nominatedNodeName %q, want Running from the cache and n2 from the API", got.Phase, got.NominatedNodeName)
	}
	if len(api.Conditions) != 3 {
		t.Error("mergeStatus changed the API status")
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
// container and sidecar ready; containers without a status are named as unknown.
func TestReadinessConditions(t *testing.T) {
	pod := testPod("uid-1")
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
		})
	}
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

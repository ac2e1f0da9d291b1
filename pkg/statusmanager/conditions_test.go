package statusmanager

// What the status manager writes of conditions and generations (upstream: status_manager.go
// SetPodStatus, mergePodStatus), through the cache and a sync to a fake API server.

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream SetPodStatus (CalculatePodStatusObservedGeneration, KEP-5067 GA in v1.35): the status
// carries the generation of the pod it was computed for, and never goes back to an older one.
func TestSetPodStatusObservedGeneration(t *testing.T) {
	pod := testPod("uid-1")
	pod.Generation = 2
	m, client, ctx := newTestManager(t, Config{}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodPending})
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if got := getAPIPod(t, ctx, client, "web").Status.ObservedGeneration; got != 2 {
		t.Errorf("API observedGeneration = %d, want 2", got)
	}
	older := pod.DeepCopy()
	older.Generation = 1
	m.SetPodStatus(older, corev1.PodStatus{Phase: corev1.PodRunning})
	if got, _ := m.GetPodStatus(pod.UID); got.ObservedGeneration != 2 || got.Phase != corev1.PodRunning {
		t.Errorf("status after a pod of generation 1 = %s, observedGeneration %d, want Running with 2", got.Phase, got.ObservedGeneration)
	}
}

// Upstream mergePodStatus, end to end: a readiness gate's condition someone patched after the
// kubelet last computed its status is not overwritten by the kubelet's older copy of it.
func TestSyncPodKeepsConditionsOfOthers(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	pod := testPod("uid-1")
	pod.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: corev1.ConditionFalse}}
	m, client, ctx := newTestManager(t, Config{}, pod)
	m.SetPodStatus(pod, corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: gate, Status: corev1.ConditionTrue}, // an older copy: the API's is False
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: ReasonReadinessGatesNotReady},
	}})
	if err := m.syncPod(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	api := getAPIPod(t, ctx, client, "web").Status
	if c := findCondition(api.Conditions, gate); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("gate condition = %+v, want the API's False kept", c)
	}
	if c := findCondition(api.Conditions, corev1.PodReady); c == nil || c.Reason != ReasonReadinessGatesNotReady {
		t.Errorf("Ready = %+v, want the kubelet's", c)
	}
}

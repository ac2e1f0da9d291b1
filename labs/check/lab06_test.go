package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lab 06: "gone" only counts for a pod that existed, and the status must be minikubelet's.
func TestStatusManagerChecks(t *testing.T) {
	when := metav1.Now()
	if r := podDeleted("default/d", nil, "", when); r.ok || !strings.Contains(r.fix, "create it, then delete it") {
		t.Errorf("never created: %s", r)
	}
	if r := podDeleted("default/d", running("d", "n"), "u", when); r.ok || !strings.Contains(r.fix, "kubectl delete pod d") {
		t.Errorf("not deleted: %s", r)
	}
	if r := podDeleted("default/d", nil, "u", when); !r.ok {
		t.Errorf("deleted: %s", r)
	}
	pod := running("s", "n")
	if r := statusByKubelet(pod); r.ok {
		t.Errorf("no managed fields: %s", r)
	}
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "minikubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &when}}
	if r := statusByKubelet(pod); !r.ok {
		t.Errorf("status by minikubelet: %s", r)
	}
}

// Lab 06, exercise 3: the status patched behind the kubelet's back. Skipped, lab06-status carries
// only the kubelet's conditions: missing. Just done, the pod still shows the IP written by hand
// until the status manager's next sync: missing, run again. Then the condition stays and the IP
// is the kubelet's again: passed.
func TestLab06SkippedPatch(t *testing.T) {
	when := metav1.Now()
	byKubelet := metav1.ManagedFieldsEntry{Manager: "minikubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &when}
	byKubectl := metav1.ManagedFieldsEntry{Manager: "kubectl-patch", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &when}
	pod := func(ip string, own bool, managers ...metav1.ManagedFieldsEntry) *corev1.Pod {
		p := running("lab06-status", "n")
		p.Status.PodIP = ip
		p.ManagedFields = managers
		if own {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: lab06Condition, Status: corev1.ConditionTrue})
		}
		return p
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		ok   bool
		says string
	}{
		{"exercise 3 skipped", pod("127.88.0.9", false, byKubelet), false, "exercise 3's patches were not made"},
		{"patched, not yet synced", pod(lab06FakeIP, true, byKubelet, byKubectl), false, "still shows your podIP"},
		{"a condition the kubelet wrote itself", pod("127.88.0.9", true, byKubelet), false, "no field manager but minikubelet"},
		{"done", pod("127.88.0.9", true, byKubelet, byKubectl), true, "stayed (field manager kubectl-patch)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := patchedBehindBack(tc.pod); r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

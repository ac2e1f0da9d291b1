package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Upstream lifecycle/predicate.go: a pod whose kubernetes.io/os label or spec.os.name names
// another OS is rejected before any resource check, the label first, with upstream's reasons and
// messages (the e2e spec PodOSRejection waits for reason PodOSNotSupported).
func TestAdmitOS(t *testing.T) {
	withOS := func(label, specOS string) *corev1.Pod {
		pod := apiPod(corev1.RestartPolicyAlways)
		if label != "" {
			pod.Labels = map[string]string{corev1.LabelOSStable: label}
		}
		if specOS != "" {
			pod.Spec.OS = &corev1.PodOS{Name: corev1.OSName(specOS)}
		}
		return pod
	}
	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantReason string
		wantMsg    string
	}{
		{"no OS asked", withOS("", ""), "", ""},
		{"linux asked", withOS("linux", "linux"), "", ""},
		{"spec.os windows", withOS("", "windows"), reasonPodOSNotSupported, "Failed to admit pod as the OS field doesn't match node OS"},
		{"label windows", withOS("windows", ""), reasonPodOSSelectorNodeLabelDoesNotMatch, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
		{"both: the label is checked first", withOS("windows", "windows"), reasonPodOSSelectorNodeLabelDoesNotMatch, "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := admitOS(tc.pod, "linux")
			if got.admit != (tc.wantReason == "") || got.reason != tc.wantReason || got.message != tc.wantMsg {
				t.Errorf("admitOS = %+v, want reason %q message %q", got, tc.wantReason, tc.wantMsg)
			}
		})
	}
	// Only the pod's label counts, as upstream: spec.nodeSelector is the scheduler's.
	pod := apiPod(corev1.RestartPolicyAlways)
	pod.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"}
	if got := admitOS(pod, "linux"); !got.admit {
		t.Errorf("a nodeSelector was checked: %+v", got)
	}
}

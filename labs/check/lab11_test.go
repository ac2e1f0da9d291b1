package main

import (
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func lab11MirrorPod(uid types.UID, containerID string, restarts int32) *corev1.Pod {
	p := running("kube-scheduler-minikubelet-cp", "minikubelet-cp")
	p.Namespace, p.UID = "kube-system", uid
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "abc"}
	p.Status.ContainerStatuses[0].ContainerID = containerID
	p.Status.ContainerStatuses[0].RestartCount = restarts
	return p
}

// Lab 11, exercise 3: the student saves kube-scheduler's mirror pod, deletes it, and the kubelet
// makes it again. Skipping the delete leaves the saved UID; a static pod restarted by the delete
// (a kubelet bug) shows a new container. Only a new UID with the same container passes.
func TestLab11MirrorPodRecreated(t *testing.T) {
	saved := lab11MirrorPod("uid-1", "containerd://c1", 0)
	tests := []struct {
		name       string
		before, at *corev1.Pod
		ok         bool
		says       string
	}{
		{"delete skipped: same UID", saved, lab11MirrorPod("uid-1", "containerd://c1", 0), false, "was not deleted"},
		{"the static pod's container was restarted", saved, lab11MirrorPod("uid-2", "containerd://c2", 1), false, "container changed"},
		{"another pod saved", running("web", "n"), lab11MirrorPod("uid-2", "containerd://c1", 0), false, "not kube-scheduler's mirror pod"},
		{"done: new UID, same container", saved, lab11MirrorPod("uid-2", "containerd://c1", 0), true, "came back as UID uid-2 (was uid-1), container containerd://c1 kept"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mirrorRecreated(tc.before, tc.at)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
			if !tc.ok && tc.says == "was not deleted" && !strings.Contains(r.fix, "exercise 3") {
				t.Errorf("the fix does not name exercise 3: %q", r.fix)
			}
		})
	}
}

// The mirror pods carry the annotation and an ownerReference to their Node (its UID too).
func TestLab11MirrorPodsOwned(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "minikubelet-cp", UID: "node-uid"}}
	owned := lab11MirrorPod("u", "c", 0)
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "Node", Name: node.Name, UID: node.UID}}
	notMirror := owned.DeepCopy()
	notMirror.Annotations = nil
	orphan := lab11MirrorPod("u", "c", 0)
	if r := mirrorPodsOwned([]*corev1.Pod{owned}, node); !r.ok {
		t.Errorf("an owned mirror pod: %s", r)
	}
	if r := mirrorPodsOwned([]*corev1.Pod{notMirror}, node); r.ok || !strings.Contains(r.String(), "not a mirror pod") {
		t.Errorf("a pod without the annotation: %s", r)
	}
	if r := mirrorPodsOwned([]*corev1.Pod{owned, orphan}, node); r.ok || !strings.Contains(r.String(), "no ownerReference") {
		t.Errorf("a mirror pod without its owner: %s", r)
	}
}

// Exercise 4, the join: only an approved, issued kubelet client CSR of a bootstrap token counts.
func TestLab11BootstrapJoin(t *testing.T) {
	csr := func(user string, approved bool, cert string) certv1.CertificateSigningRequest {
		c := certv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-x"}, Spec: certv1.CertificateSigningRequestSpec{
			SignerName: certv1.KubeAPIServerClientKubeletSignerName, Username: user}}
		if approved {
			c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved, Reason: "AutoApproved"}}
		}
		c.Status.Certificate = []byte(cert)
		return c
	}
	if r := bootstrapJoin(nil); r.ok || !strings.Contains(r.fix, "KUBEADM_NODES=2") {
		t.Errorf("no CSR: %s", r)
	}
	if r := bootstrapJoin([]certv1.CertificateSigningRequest{csr("system:node:minikubelet-cp", true, "c")}); r.ok {
		t.Errorf("a rotation CSR (not a bootstrap token's) passed: %s", r)
	}
	if r := bootstrapJoin([]certv1.CertificateSigningRequest{csr("system:bootstrap:abcdef", true, "")}); r.ok {
		t.Errorf("an approved CSR without a certificate passed: %s", r)
	}
	if r := bootstrapJoin([]certv1.CertificateSigningRequest{csr("system:bootstrap:abcdef", true, "c")}); !r.ok {
		t.Errorf("the join's CSR: %s", r)
	}
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Lab 11, the cluster runs on your kubelet (make kubeadm-up, KUBEADM_NODES=2): kubeadm's control
// plane is four static pods whose API copies (mirror pods) minikubelet made and owns through the
// Node; exercise 3 saved kube-scheduler's mirror pod, deleted it and saw it come back — a new UID,
// the same container (the static pod was never restarted); the second node joined with a
// bootstrap token, whose CSR kubeadm's bindings approved. Run it against the kubeadm cluster:
//
//	make lab-check LAB=11 ARGS='--kubeconfig _output/kubeadm/admin.kubeconfig --node minikubelet-cp'
const (
	lab11Saved    = "_output/labs/lab11-mirror-before.yaml"
	lab11Mirror   = "kube-scheduler"
	lab11Exercise = "exercise 3: kubectl -n kube-system get pod kube-scheduler-$NODE -o yaml > " + lab11Saved +
		", then kubectl -n kube-system delete pod kube-scheduler-$NODE and watch it come back"
)

// lab11StaticPods are the control plane's static pods kubeadm writes to /etc/kubernetes/manifests.
var lab11StaticPods = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}

func lab11() []check {
	return []check{
		apiServerAnswers(),
		nodeReady(),
		{name: "the control plane runs as mirror pods of static pods", run: func(ctx context.Context, e *env) result {
			node, err := e.node(ctx)
			if err != nil {
				return missing("node "+e.cfg.nodeName+": "+err.Error(), "see the error")
			}
			var pods []*corev1.Pod
			for _, c := range lab11StaticPods {
				p, err := e.client.CoreV1().Pods("kube-system").Get(ctx, c+"-"+node.Name, metav1.GetOptions{})
				if err != nil {
					return missing("mirror pod kube-system/"+c+"-"+node.Name+": "+err.Error(),
						"is this kubeadm's cluster (make kubeadm-up; --kubeconfig _output/kubeadm/admin.kubeconfig --node minikubelet-cp)?")
				}
				pods = append(pods, p)
			}
			return mirrorPodsOwned(pods, node)
		}},
		{name: "a deleted mirror pod came back, its container kept", run: func(ctx context.Context, e *env) result {
			b, err := os.ReadFile(filepath.Join(e.cfg.repoDir, lab11Saved))
			if err != nil {
				return missing(lab11Saved+" cannot be read: "+err.Error(), lab11Exercise)
			}
			var before corev1.Pod
			if err := yaml.Unmarshal(b, &before); err != nil {
				return missing(lab11Saved+" is not a pod's YAML: "+err.Error(), lab11Exercise)
			}
			now, err := e.client.CoreV1().Pods("kube-system").Get(ctx, before.Name, metav1.GetOptions{})
			if err != nil {
				return missing("pod kube-system/"+before.Name+": "+err.Error(), "wait a few seconds: the kubelet creates it again at its next sync")
			}
			return mirrorRecreated(&before, now)
		}},
		{name: "a node joined with a bootstrap token", run: func(ctx context.Context, e *env) result {
			csrs, err := e.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err != nil {
				return missing("CSRs: "+err.Error(), "see the error")
			}
			return bootstrapJoin(csrs.Items)
		}},
	}
}

// mirrorPodsOwned: each pod is a mirror pod (annotation kubernetes.io/config.mirror) owned by the
// Node (an ownerReference to it, so that deleting the Node deletes them). Pure.
func mirrorPodsOwned(pods []*corev1.Pod, node *corev1.Node) result {
	for _, p := range pods {
		if _, ok := p.Annotations[corev1.MirrorPodAnnotationKey]; !ok {
			return missing("pod kube-system/"+p.Name+" has no annotation "+corev1.MirrorPodAnnotationKey+": not a mirror pod",
				"was it created with kubectl? Delete it; the kubelet makes the mirror pod of its static pod")
		}
		owned := false
		for _, o := range p.OwnerReferences {
			owned = owned || (o.Kind == "Node" && o.Name == node.Name && o.UID == node.UID)
		}
		if !owned {
			return missing("mirror pod kube-system/"+p.Name+" has no ownerReference to Node "+node.Name, "see pkg/podmanager/mirror_client.go mirrorPodFor")
		}
	}
	return passed("%d mirror pods on %s, annotated %s and owned by the Node", len(pods), node.Name, corev1.MirrorPodAnnotationKey)
}

// mirrorRecreated: the mirror pod now is another object than the one saved (a new UID) that
// reports the same container, not restarted. Pure.
func mirrorRecreated(before, now *corev1.Pod) result {
	if !strings.HasPrefix(before.Name, lab11Mirror+"-") || before.UID == "" {
		return missing(lab11Saved+" holds "+before.Name+", not kube-scheduler's mirror pod as the API server returns it", lab11Exercise)
	}
	cb, cn := firstContainer(before), firstContainer(now)
	if cb == nil || cn == nil || cb.ContainerID == "" {
		return missing("pod "+now.Name+" reports no container (yet)", "wait until the kubelet has written its status, then run the check again")
	}
	switch {
	case now.UID == before.UID:
		return missing(fmt.Sprintf("pod %s still has the UID you saved (%s): it was not deleted", now.Name, now.UID), lab11Exercise)
	case cn.ContainerID != cb.ContainerID || cn.RestartCount != cb.RestartCount:
		return missing(fmt.Sprintf("pod %s's container changed: %s (restarts %d) → %s (restarts %d)", now.Name, cb.ContainerID, cb.RestartCount, cn.ContainerID, cn.RestartCount),
			"deleting a mirror pod must not touch the static pod; save it again and repeat exercise 3")
	}
	return passed("%s came back as UID %s (was %s), container %s kept, restarts %d", now.Name, now.UID, before.UID, cn.ContainerID, cn.RestartCount)
}

// bootstrapJoin: a kubelet client CSR made with a bootstrap token (user system:bootstrap:<id>)
// was approved and issued. Pure.
func bootstrapJoin(csrs []certv1.CertificateSigningRequest) result {
	for _, c := range csrs {
		if c.Spec.SignerName != certv1.KubeAPIServerClientKubeletSignerName || !strings.HasPrefix(c.Spec.Username, "system:bootstrap:") {
			continue
		}
		for _, cond := range c.Status.Conditions {
			if cond.Type == certv1.CertificateApproved && len(c.Status.Certificate) > 0 {
				return passed("CSR %s by %s: %s (%s), issued", c.Name, c.Spec.Username, cond.Reason, cond.Message)
			}
		}
	}
	return missing("no approved, issued kubelet client CSR made with a bootstrap token (CSRs are kept for an hour)",
		"start the cluster with a second node: sudo KUBEADM_NODES=2 make kubeadm-up (exercise 4)")
}

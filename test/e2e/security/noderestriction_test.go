package security

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// nodeClient is a client with the node's own credentials: the kubeconfig TLS bootstrap wrote
// under --root-dir, which names the client certificate (CN system:node:<name>, O system:nodes).
func nodeClient(t *testing.T, n *node) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(n.rootDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 30 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// The Node authorizer and the NodeRestriction admission plugin (kube-apiserver
// --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction, kubeadm's
// defaults) confine a kubelet's credentials to its own node: it may read and label its own Node,
// but not another node's; renew its own Lease, not another's; and read only the Secrets of pods
// bound to it. The node's kubeconfig from TLS bootstrap is the identity they check, so a
// bootstrap that ended with a broader identity (an admin kubeconfig, a wrong CN) fails here.
func TestNodeRestriction(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, "e2e-security-self", "-v", "2")
	self := nodeClient(t, n)
	user := `"system:node:` + n.name + `"`

	// Another node, as another kubelet would have registered it, with its Lease.
	const other = "e2e-security-other"
	if _, err := cluster.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNodeArtifacts(other) })
	otherLease, err := cluster.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: other},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(other), LeaseDurationSeconds: ptr.To[int32](40)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	for _, name := range []string{"unreferenced", "referenced"} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"k": "v"}}
		if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// The credentials work: the node reads its own Node and sets an unrestricted label on it.
	if _, err := self.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the node cannot read its own Node with its kubeconfig: %v", err)
	}
	labelPatch := func(key string) []byte {
		return []byte(`{"metadata":{"labels":{"` + key + `":"yes"}}}`)
	}
	if _, err := self.CoreV1().Nodes().Patch(ctx, n.name, types.MergePatchType, labelPatch("e2e.minikubelet.io/probe"), metav1.PatchOptions{}); err != nil {
		t.Errorf("the node cannot label its own Node: %v", err)
	}

	denied := []struct {
		what string
		do   func() error
		// by is part of the refusal that names who refused: the Node authorizer, or
		// NodeRestriction admission (whose messages name the node).
		by string
	}{
		{"PATCH another node's labels", func() error {
			_, err := self.CoreV1().Nodes().Patch(ctx, other, types.MergePatchType, labelPatch("e2e.minikubelet.io/probe"), metav1.PatchOptions{})
			return err
		}, `node "` + n.name + `" is not allowed to modify node "` + other + `"`},
		{"update another node's Lease", func() error {
			lease := otherLease.DeepCopy()
			lease.Spec.HolderIdentity = ptr.To(n.name)
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			_, err := self.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, lease, metav1.UpdateOptions{})
			return err
		}, user},
		{"read a Secret no pod on the node uses", func() error {
			_, err := self.CoreV1().Secrets(ns).Get(ctx, "unreferenced", metav1.GetOptions{})
			return err
		}, user},
		{"set a node-restriction.kubernetes.io/ label on its own Node", func() error {
			_, err := self.CoreV1().Nodes().Patch(ctx, n.name, types.MergePatchType, labelPatch("node-restriction.kubernetes.io/pool"), metav1.PatchOptions{})
			return err
		}, "is not allowed to modify labels: node-restriction.kubernetes.io/pool"},
	}
	for _, tc := range denied {
		err := tc.do()
		switch {
		case err == nil:
			t.Errorf("%s: allowed, want 403 Forbidden", tc.what)
		case !apierrors.IsForbidden(err):
			t.Errorf("%s: %v, want 403 Forbidden", tc.what, err)
		case !strings.Contains(err.Error(), tc.by):
			t.Errorf("%s: forbidden with %q, want a refusal containing %q", tc.what, err, tc.by)
		default:
			t.Logf("%s: %v", tc.what, err)
		}
	}

	// Nothing changed behind the refusals.
	otherNode, err := cluster.Client.CoreV1().Nodes().Get(ctx, other, metav1.GetOptions{})
	if err != nil || otherNode.Labels["e2e.minikubelet.io/probe"] != "" {
		t.Errorf("the other node was labelled: %v (err %v)", otherNode.GetLabels(), err)
	}
	if l, err := cluster.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, other, metav1.GetOptions{}); err != nil || *l.Spec.HolderIdentity != other {
		t.Errorf("the other node's Lease changed hands: %v (err %v)", l.GetName(), err)
	}
	ownNode, err := cluster.Client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil || ownNode.Labels["e2e.minikubelet.io/probe"] != "yes" || ownNode.Labels["node-restriction.kubernetes.io/pool"] != "" {
		t.Errorf("own node labels = %v (err %v): want the probe label and no node-restriction one", ownNode.GetLabels(), err)
	}

	// The Secret refusal is about the relationship, not the namespace: once a pod bound to the
	// node uses a Secret, the node may read that one (the authorizer's graph follows the pod).
	pod := podOn(n.name, "uses-secret")
	pod.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "referenced"}}}}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the node to read the Secret its pod uses", func() (bool, string) {
		_, err := self.CoreV1().Secrets(ns).Get(ctx, "referenced", metav1.GetOptions{})
		return err == nil, "err: " + errString(err)
	})
	if _, err := self.CoreV1().Secrets(ns).Get(ctx, "unreferenced", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading the unreferenced Secret after the pod started: %v, want 403 Forbidden", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

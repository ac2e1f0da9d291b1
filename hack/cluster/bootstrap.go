package main

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// bootstrapGroup is the extra group kubeadm gives node bootstrap tokens; the RBAC below is bound to it.
const bootstrapGroup = "system:bootstrappers:kubeadm:default-node-token"

// writeCertKubeconfig writes a kubeconfig that authenticates with <pki>/<cert>.crt/.key.
func writeCertKubeconfig(path, server string, p pki, cert string) error {
	ca, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return err
	}
	crt, err := os.ReadFile(p.path(cert + ".crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.path(cert + ".key"))
	if err != nil {
		return err
	}
	return writeKubeconfig(path, server, ca, &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key})
}

func writeKubeconfig(path, server string, ca []byte, user *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["user"] = user
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "user"}
	cfg.CurrentContext = "local"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o600)
}

// bootstrapObjects creates what `kubeadm init` creates so that a kubelet can join with a token:
// the token Secret, and the three ClusterRoleBindings of the TLS bootstrap flow. Then it writes
// bootstrap.kubeconfig for the kubelet.
func bootstrapObjects(ctx context.Context, c *cluster, p pki, server string) error {
	client, _, err := c.adminClients()
	if err != nil {
		return err
	}
	id, err := randomString(6)
	if err != nil {
		return err
	}
	secret, err := randomString(16)
	if err != nil {
		return err
	}
	tokenSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: metav1.NamespaceSystem},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"description":                    "minikubelet local cluster node bootstrap token",
			"token-id":                       id,
			"token-secret":                   secret,
			"expiration":                     time.Now().Add(365 * 24 * time.Hour).UTC().Format(time.RFC3339),
			"usage-bootstrap-authentication": "true",
			"usage-bootstrap-signing":        "true",
			"auth-extra-groups":              bootstrapGroup,
		},
	}
	// The apiserver may still be finishing its post-start hooks (RBAC bootstrap roles); retry briefly.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err = createBootstrapObjects(ctx, client, tokenSecret, clusterBindings())
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("create bootstrap token and RBAC: %w", err)
	}
	ca, err := os.ReadFile(p.path("ca.crt"))
	if err != nil {
		return err
	}
	return writeKubeconfig(c.path("bootstrap.kubeconfig"), server, ca, &clientcmdapi.AuthInfo{Token: id + "." + secret})
}

// clusterBindings are the ClusterRoleBindings a kubelet needs from the cluster.
func clusterBindings() []*rbacv1.ClusterRoleBinding {
	return []*rbacv1.ClusterRoleBinding{
		// The token may create CSRs and watch them.
		binding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", bootstrapGroup),
		// kcm's csrapprover approves a token's CSR for a node client certificate.
		binding("kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", bootstrapGroup),
		// kcm's csrapprover approves a node's CSR to renew its own client certificate (rotation).
		binding("kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
		// The API server calls the kubelet API (exec, logs, port-forward) as this user; the kubelet
		// asks the API server whether it may (SubjectAccessReview on nodes/proxy…).
		userBinding("minikubelet:apiserver-kubelet-api-admin", "system:kubelet-api-admin", "kube-apiserver-kubelet-client"),
	}
}

// ensureBindings creates the bindings a running cluster lacks (a cluster started by an older
// version of this program gets what newer minikubelet features need).
func ensureBindings(ctx context.Context, c *cluster) error {
	client, _, err := c.adminClients()
	if err != nil {
		return err
	}
	return createBindings(ctx, client, clusterBindings())
}

func createBootstrapObjects(ctx context.Context, client kubernetes.Interface, s *corev1.Secret, bindings []*rbacv1.ClusterRoleBinding) error {
	if _, err := client.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return createBindings(ctx, client, bindings)
}

// createBindings creates each ClusterRoleBinding that does not exist yet.
func createBindings(ctx context.Context, client kubernetes.Interface, bindings []*rbacv1.ClusterRoleBinding) error {
	for _, b := range bindings {
		if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ClusterRoleBinding %s: %w", b.Name, err)
		}
	}
	return nil
}

func userBinding(name, role, user string) *rbacv1.ClusterRoleBinding {
	b := binding(name, role, "")
	b.Subjects = []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	return b
}

func binding(name, role, group string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}},
	}
}

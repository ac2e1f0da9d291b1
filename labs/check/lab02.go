package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// Lab 02, TLS bootstrap: the node's client certificate, the kubeconfig that uses it, the CSR that
// got it, the CSR the student denied, and the auto-approval put back.
const (
	// autoApproveBinding is kubeadm's binding that lets kcm approve a bootstrap token's CSR.
	autoApproveBinding = "kubeadm:node-autoapprove-bootstrap"
	autoApproveRole    = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
	restoreBinding     = "`make cluster-up` puts it back, or: kubectl create clusterrolebinding " + autoApproveBinding +
		" --clusterrole=" + autoApproveRole + " --group=system:bootstrappers:kubeadm:default-node-token"
	rebootstrap = "stop minikubelet, remove its credentials (rm -rf _output/run/pki _output/run/kubeconfig) and `make run` again: it bootstraps anew"
)

func lab02() []check {
	return []check{
		apiServerAnswers(),
		{name: "the client certificate files", run: func(_ context.Context, e *env) result {
			return clientCertFiles(e.certDir())
		}},
		{name: "the client certificate's identity", run: func(_ context.Context, e *env) result {
			return clientCertIdentity(filepath.Join(e.certDir(), "kubelet-client-current.pem"), e.cfg.nodeName, e.restConfig.CAData, time.Now())
		}},
		{name: "the node's kubeconfig", run: func(_ context.Context, e *env) result {
			return nodeKubeconfig(e.path("kubeconfig"), filepath.Join(e.certDir(), "kubelet-client-current.pem"), e.cfg.bootstrapKubeconfig)
		}},
		{name: "the approved CSR", run: func(ctx context.Context, e *env) result {
			id, r := bootstrapTokenID(e.cfg.bootstrapKubeconfig)
			if !r.ok {
				return r
			}
			csrs, err := e.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err != nil {
				return missing("list CSRs: "+err.Error(), "see the error")
			}
			return approvedCSR(csrs.Items, id, e.cfg.nodeName)
		}},
		{name: "the CSR you denied", run: func(ctx context.Context, e *env) result {
			id, r := bootstrapTokenID(e.cfg.bootstrapKubeconfig)
			if !r.ok {
				return r
			}
			csrs, err := e.client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err != nil {
				return missing("list CSRs: "+err.Error(), "see the error")
			}
			return deniedCSR(csrs.Items, id)
		}},
		{name: "auto-approval is back", run: func(ctx context.Context, e *env) result {
			b, err := e.client.RbacV1().ClusterRoleBindings().Get(ctx, autoApproveBinding, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return missing("ClusterRoleBinding "+autoApproveBinding+" is missing: new nodes' CSRs stay Pending", restoreBinding)
			}
			if err != nil {
				return missing("ClusterRoleBinding "+autoApproveBinding+": "+err.Error(), "see the error")
			}
			if b.RoleRef.Name != autoApproveRole {
				return missing("ClusterRoleBinding "+autoApproveBinding+" binds "+b.RoleRef.Name+", not "+autoApproveRole,
					"delete it, then: "+restoreBinding)
			}
			return passed("ClusterRoleBinding %s is back: kube-controller-manager approves bootstrap CSRs again", autoApproveBinding)
		}},
	}
}

// clientCertFiles: kubelet-client-current.pem is a symlink to a kubelet-client-<ts>.pem beside it,
// readable by its owner only.
func clientCertFiles(certDir string) result {
	current := filepath.Join(certDir, "kubelet-client-current.pem")
	target, err := os.Readlink(current)
	if err != nil {
		if _, statErr := os.Lstat(current); statErr == nil {
			return missing(current+" is not a symlink", "bootstrap writes a dated file and points this link at it; "+rebootstrap)
		}
		return missing("no client certificate at "+current, "run `make run`: TLS bootstrap writes it (is --root-dir "+filepath.Dir(certDir)+" right?)")
	}
	if filepath.Dir(target) != "." || !strings.HasPrefix(target, "kubelet-client-") || target == "kubelet-client-current.pem" {
		return missing(fmt.Sprintf("%s points at %s, not at a kubelet-client-<date>.pem beside it", current, target), rebootstrap)
	}
	info, err := os.Stat(current)
	if err != nil {
		return missing(fmt.Sprintf("%s points at %s, which cannot be read: %v", current, target, err), rebootstrap)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		return missing(fmt.Sprintf("%s holds a private key but has mode %04o", target, mode), "it must be 0600 (owner only): chmod 600 "+filepath.Join(certDir, target))
	}
	return passed("%s → %s, mode 0600 (it holds the private key)", current, target)
}

// clientCertIdentity: the certificate says system:node:<node> in group system:nodes, is valid now
// and was signed by the cluster CA.
func clientCertIdentity(path, nodeName string, clusterCA []byte, now time.Time) result {
	data, err := os.ReadFile(path)
	if err != nil {
		return missing("no client certificate to read: "+err.Error(), "see the line above")
	}
	var cert *x509.Certificate
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			if cert, err = x509.ParseCertificate(block.Bytes); err != nil {
				return missing(path+" holds a certificate that does not parse: "+err.Error(), rebootstrap)
			}
			break
		}
	}
	if cert == nil {
		return missing(path+" holds no CERTIFICATE block", rebootstrap)
	}
	want := "system:node:" + nodeName
	if cert.Subject.CommonName != want || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != "system:nodes" {
		return missing(fmt.Sprintf("the certificate is for CN=%s O=%v, not CN=%s O=[system:nodes]", cert.Subject.CommonName, cert.Subject.Organization, want),
			"is --node right? Otherwise "+rebootstrap)
	}
	if now.After(cert.NotAfter) || now.Before(cert.NotBefore) {
		return missing(fmt.Sprintf("the certificate is valid only from %s to %s", cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339)), rebootstrap)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(clusterCA) {
		return missing("the admin kubeconfig embeds no cluster CA to verify the certificate with", "use the admin.kubeconfig written by `make cluster-up`")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now}); err != nil {
		return missing("the certificate is not a client certificate of this cluster's CA: "+err.Error(),
			"was the cluster recreated? `make run` notices and bootstraps again; or "+rebootstrap)
	}
	return passed("it says CN=%s O=system:nodes, issued by %s, valid until %s", want, cert.Issuer.CommonName, cert.NotAfter.UTC().Format(time.RFC3339))
}

// nodeKubeconfig: the kubeconfig the bootstrap wrote uses the symlink (so a rotation needs no new
// kubeconfig) and the CA of the bootstrap kubeconfig.
func nodeKubeconfig(path, currentPEM, bootstrapPath string) result {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return missing("the node's kubeconfig "+path+" cannot be read: "+err.Error(), "TLS bootstrap writes it: `make run`")
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil || cfg.Clusters[ctx.Cluster] == nil {
		return missing(path+" has no complete current context", rebootstrap)
	}
	user, cluster := cfg.AuthInfos[ctx.AuthInfo], cfg.Clusters[ctx.Cluster]
	abs, _ := filepath.Abs(currentPEM)
	if user.ClientCertificate != abs || user.ClientKey != abs {
		return missing(fmt.Sprintf("%s uses client-certificate %q and client-key %q, not the symlink %s", path, user.ClientCertificate, user.ClientKey, abs),
			"both must name kubelet-client-current.pem, so a rotated certificate is picked up without rewriting the kubeconfig; "+rebootstrap)
	}
	boot, err := clientcmd.LoadFromFile(bootstrapPath)
	if err != nil {
		return missing("the bootstrap kubeconfig "+bootstrapPath+" cannot be read: "+err.Error(), "pass --bootstrap-kubeconfig")
	}
	bctx := boot.Contexts[boot.CurrentContext]
	if bctx == nil || boot.Clusters[bctx.Cluster] == nil || string(boot.Clusters[bctx.Cluster].CertificateAuthorityData) != string(cluster.CertificateAuthorityData) {
		return missing(path+" does not embed the CA of "+bootstrapPath, "the node's trust must come from the bootstrap kubeconfig; "+rebootstrap)
	}
	return passed("%s: client-certificate and client-key are %s, CA from %s, server %s", path, abs, bootstrapPath, cluster.Server)
}

// bootstrapTokenID reads the token ID (the part before the dot) from the bootstrap kubeconfig: the
// API server knows the token's user as system:bootstrap:<id>.
func bootstrapTokenID(path string) (string, result) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", missing("the bootstrap kubeconfig "+path+" cannot be read: "+err.Error(), "pass --bootstrap-kubeconfig")
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
		return "", missing(path+" has no current user", "use the bootstrap.kubeconfig of `make cluster-up`")
	}
	id, _, ok := strings.Cut(cfg.AuthInfos[ctx.AuthInfo].Token, ".")
	if !ok || id == "" {
		return "", missing(path+" has no bootstrap token (<id>.<secret>)", "use the bootstrap.kubeconfig of `make cluster-up`")
	}
	return id, passed("bootstrap token %s", id)
}

// csrCommonName is the CN the CSR asks for, "" if its request does not parse.
func csrCommonName(csr *certificatesv1.CertificateSigningRequest) string {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return ""
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return ""
	}
	return req.Subject.CommonName
}

func hasCondition(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}

// approvedCSR: a CSR made with the bootstrap token for the node's name was approved and issued. Pure.
func approvedCSR(csrs []certificatesv1.CertificateSigningRequest, tokenID, nodeName string) result {
	user, cn := "system:bootstrap:"+tokenID, "system:node:"+nodeName
	for i := range csrs {
		csr := &csrs[i]
		if csr.Spec.Username != user || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || csrCommonName(csr) != cn {
			continue
		}
		if hasCondition(csr, certificatesv1.CertificateApproved) && len(csr.Status.Certificate) > 0 {
			return passed("CSR %s by %s for %s: Approved, Issued (signer %s)", csr.Name, user, cn, csr.Spec.SignerName)
		}
	}
	return missing(fmt.Sprintf("no approved and issued CSR by %s for %s", user, cn),
		"kube-controller-manager deletes issued CSRs after an hour; to see one again, "+rebootstrap)
}

// deniedCSR: the student denied a CSR made with the bootstrap token (exercise: a second node). Pure.
func deniedCSR(csrs []certificatesv1.CertificateSigningRequest, tokenID string) result {
	user := "system:bootstrap:" + tokenID
	for i := range csrs {
		csr := &csrs[i]
		if csr.Spec.Username == user && hasCondition(csr, certificatesv1.CertificateDenied) {
			return passed("CSR %s by %s for %s: Denied", csr.Name, user, csrCommonName(csr))
		}
	}
	return missing("no CSR by "+user+" was denied",
		"do exercise 3: delete the auto-approval binding, start a second node (lab02-denied), then kubectl certificate deny its Pending CSR")
}

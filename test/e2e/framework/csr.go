package framework

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApproveCSR approves csr as an admin does with `kubectl certificate approve`.
func (c *Cluster) ApproveCSR(csr *certificatesv1.CertificateSigningRequest) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "E2EApprove", Message: "approved by the e2e test"})
	_, err := c.Client.CertificatesV1().CertificateSigningRequests().UpdateApproval(context.Background(), csr.Name, csr, metav1.UpdateOptions{})
	return err
}

// ApproveServingCSR approves the kubelet-serving CSR of node (one run with
// --rotate-server-certificates) and waits until it is issued. Nothing approves these
// automatically (a node may ask for any IP address in one); metrics-server needs the certificate,
// as it verifies each kubelet against the cluster CA.
func (c *Cluster) ApproveServingCSR(t *testing.T, node string) {
	t.Helper()
	csrs := c.Client.CertificatesV1().CertificateSigningRequests()
	Eventually(t, time.Minute, "the kubelet-serving CSR of "+node+" to be issued", func() (bool, string) {
		list, err := csrs.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, csr := range list.Items {
			if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName || csr.Spec.Username != "system:node:"+node {
				continue
			}
			if len(csr.Status.Certificate) > 0 {
				return true, ""
			}
			if len(csr.Status.Conditions) == 0 {
				if err := c.ApproveCSR(&csr); err != nil {
					return false, err.Error()
				}
			}
			return false, "approved " + csr.Name + ", not issued yet"
		}
		return false, "no CSR yet"
	})
}

package node

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// kubeletArgs are the flags of a fake node with a fixed machine size.
func kubeletArgs(t *testing.T, name, rootDir string, extra ...string) []string {
	return append([]string{
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig,
		"--root-dir", rootDir,
		"--hostname-override", name,
		"--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)),
		"--node-capacity", "cpu=8,memory=16Gi,ephemeral-storage=50Gi",
		"--max-pods", "30",
		"-v", "2",
	}, extra...)
}

func readyCondition(name string) (corev1.ConditionStatus, string) {
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, fmt.Sprintf("Ready=%s reason=%s message=%q", c.Status, c.Reason, c.Message)
		}
	}
	return "", "no Ready condition"
}

func waitReady(t *testing.T, name string, want corev1.ConditionStatus, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, fmt.Sprintf("node %s Ready=%s", name, want), func() (bool, string) {
		status, msg := readyCondition(name)
		return status == want, msg
	})
}

// csrsFor lists the CSRs that ask for a client certificate of this node.
func csrsFor(t *testing.T, name string) []certificatesv1.CertificateSigningRequest {
	t.Helper()
	list, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []certificatesv1.CertificateSigningRequest
	for _, csr := range list.Items {
		block, _ := pem.Decode(csr.Spec.Request)
		if block == nil {
			continue
		}
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err == nil && req.Subject.CommonName == "system:node:"+name {
			out = append(out, csr)
		}
	}
	return out
}

// The node agent end to end, as a student first meets it: it joins securely, is Ready with the
// right facts, survives being stopped (the grace period makes it NotReady/Unknown, SIGCONT brings
// it back), exits cleanly on SIGTERM, and a restart reuses its certificate (no second CSR).
func TestNodeJoinsStaysReadyAndRestarts(t *testing.T) {
	const name = "e2e-node-1"
	ctx := context.Background()
	t.Cleanup(func() { deleteNodeArtifacts(t, name) })
	rootDir := t.TempDir()
	args := kubeletArgs(t, name, rootDir,
		"--node-labels", "e2e.minikubelet.io/suite=node",
		"--register-with-taints", "e2e.minikubelet.io/dedicated=true:NoSchedule")
	kubelet := framework.StartProcess(t, minikubelet, args...)
	waitReady(t, name, corev1.ConditionTrue, time.Minute)

	// The CSR was made by the bootstrap token and approved by kube-controller-manager.
	csrs := csrsFor(t, name)
	if len(csrs) != 1 {
		t.Fatalf("want exactly one CSR for %s, got %d", name, len(csrs))
	}
	if u := csrs[0].Spec.Username; !strings.HasPrefix(u, "system:bootstrap:") {
		t.Errorf("CSR requested by %q, want the bootstrap token user", u)
	}
	if csrs[0].Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("CSR signer = %s", csrs[0].Spec.SignerName)
	}

	node, err := cluster.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]bool{
		"cpu capacity 8":           node.Status.Capacity.Cpu().String() == "8",
		"memory capacity 16Gi":     node.Status.Capacity.Memory().String() == "16Gi",
		"pods capacity 30":         node.Status.Capacity.Pods().String() == "30",
		"allocatable pods 30":      node.Status.Allocatable.Pods().String() == "30",
		"kubelet version v1.36.3":  node.Status.NodeInfo.KubeletVersion == "v1.36.3",
		"label from --node-labels": node.Labels["e2e.minikubelet.io/suite"] == "node",
		"hostname label":           node.Labels[corev1.LabelHostname] == name,
		"os label":                 node.Labels[corev1.LabelOSStable] == "linux",
		// kcm's node lifecycle controller may add its own not-ready taints for a moment; ours must be there.
		"taint from --register-with-taints": hasTaint(node.Spec.Taints, corev1.Taint{Key: "e2e.minikubelet.io/dedicated", Value: "true", Effect: corev1.TaintEffectNoSchedule}),
		"kubelet port published":            node.Status.DaemonEndpoints.KubeletEndpoint.Port == int32(mustAtoi(t, argValue(args, "--port"))),
	}
	for what, ok := range checks {
		if !ok {
			t.Errorf("node %s: %s does not hold; taints %v labels %v status %+v", name, what, node.Spec.Taints, node.Labels, node.Status)
		}
	}
	addrs := map[corev1.NodeAddressType]string{}
	for _, a := range node.Status.Addresses {
		addrs[a.Type] = a.Address
	}
	if addrs[corev1.NodeInternalIP] != "127.0.0.1" || addrs[corev1.NodeHostName] != name {
		t.Errorf("addresses = %v", node.Status.Addresses)
	}

	// The Lease controller starts beside the status loop: the Node may be Ready a moment before
	// the first Lease exists.
	lease := waitLease(t, name)
	if *lease.Spec.HolderIdentity != name || *lease.Spec.LeaseDurationSeconds != 40 ||
		len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != node.UID {
		t.Errorf("lease = %+v owners %+v", lease.Spec, lease.OwnerReferences)
	}

	out, err := cluster.KubectlOutput("describe", "node", name)
	if err != nil {
		t.Fatal(err, out)
	}
	for _, want := range []string{"HolderIdentity:  " + name, "KubeletReady", "InternalIP:  127.0.0.1", "Kubelet Version:            v1.36.3"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe node lacks %q:\n%s", want, out)
		}
	}
	framework.Eventually(t, 30*time.Second, "the NodeReady event", func() (bool, string) {
		events, err := cluster.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": name, "source": "kubelet"}.String()})
		if err != nil {
			return false, err.Error()
		}
		var reasons []string
		for _, e := range events.Items {
			reasons = append(reasons, e.Reason)
		}
		got := strings.Join(reasons, ",")
		return strings.Contains(got, "NodeReady") && strings.Contains(got, "Starting") && strings.Contains(got, "NodeHasSufficientMemory"), got
	})

	// Trust comes from the CA; the written kubeconfig never skips verification, keys are 0600.
	kubeconfig, err := os.ReadFile(filepath.Join(rootDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(kubeconfig), "insecure") || !strings.Contains(string(kubeconfig), "certificate-authority-data") {
		t.Errorf("kubeconfig must embed the CA and not skip TLS verification:\n%s", kubeconfig)
	}
	for _, f := range []string{filepath.Join(rootDir, "kubeconfig"), filepath.Join(rootDir, "pki", "kubelet-client-current.pem")} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (err %v), want 0600", f, fi.Mode().Perm(), err)
		}
	}

	// SIGSTOP: the Lease goes stale; after the grace period kcm marks the node Unknown.
	if err := kubelet.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "kcm to mark the stopped node not Ready", func() (bool, string) {
		status, msg := readyCondition(name)
		return status != corev1.ConditionTrue && status != "", msg
	})
	// SIGCONT: the same process picks up again and the node is Ready without a restart.
	if err := kubelet.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitReady(t, name, corev1.ConditionTrue, time.Minute)
	if kubelet.Exited() {
		t.Fatal("the kubelet exited after SIGCONT")
	}

	// SIGTERM: a clean, quick exit with status 0.
	if err := kubelet.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := kubelet.Wait(20 * time.Second); err != nil || code != 0 {
		t.Fatalf("after SIGTERM: exit code %d, err %v; want 0", code, err)
	}

	// Restart with the same root dir: the certificate is reused, no second CSR.
	before, err := cluster.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restarted := framework.StartProcess(t, minikubelet, args...)
	framework.Eventually(t, time.Minute, "the restarted kubelet to renew its lease", func() (bool, string) {
		l, err := cluster.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return l.Spec.RenewTime.After(before.Spec.RenewTime.Time), l.Spec.RenewTime.String()
	})
	waitReady(t, name, corev1.ConditionTrue, time.Minute)
	if n := len(csrsFor(t, name)); n != 1 {
		t.Errorf("after a restart there are %d CSRs for %s, want still 1", n, name)
	}
	if !strings.Contains(restarted.Log(), "Using the existing client certificate") {
		t.Errorf("the restarted kubelet did not say it reused its certificate:\n%s", restarted.Log())
	}
}

// waitLease returns the node's Lease once the lease controller has created it.
func waitLease(t *testing.T, name string) *coordinationv1.Lease {
	t.Helper()
	var lease *coordinationv1.Lease
	framework.Eventually(t, 20*time.Second, "Lease kube-node-lease/"+name, func() (bool, string) {
		l, err := cluster.Client.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		lease = l
		return true, ""
	})
	return lease
}

func hasTaint(taints []corev1.Taint, want corev1.Taint) bool {
	for _, t := range taints {
		if t.Key == want.Key && t.Value == want.Value && t.Effect == want.Effect {
			return true
		}
	}
	return false
}

func argValue(args []string, flag string) string {
	for i := range args {
		if args[i] == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The node is Ready only while its container runtime is (upstream runtimeState): the built-in
// fake runtime, made not ready with `minikubelet fake-runtime runtime-not-ready`, turns the node
// NotReady with the runtime's reason in the message; runtime-ready brings it back.
func TestRuntimeReadinessDrivesNodeReady(t *testing.T) {
	const name = "e2e-runtime-node"
	t.Cleanup(func() { deleteNodeArtifacts(t, name) })
	rootDir, err := os.MkdirTemp("", "mk") // short: the fake runtime's socket lives in it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	framework.StartProcess(t, minikubelet, kubeletArgs(t, name, rootDir, "--node-status-update-frequency", "2s")...)
	waitReady(t, name, corev1.ConditionTrue, time.Minute)

	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(v, "minikubelet-fake://") {
		t.Errorf("containerRuntimeVersion = %q, want minikubelet-fake://…", v)
	}

	socket := filepath.Join(rootDir, "fake-runtime.sock")
	fault := func(args ...string) {
		t.Helper()
		if code, out := framework.RunToExit(t, time.Minute, minikubelet, append(append([]string{"fake-runtime"}, args...), "--socket", socket)...); code != 0 {
			t.Fatalf("minikubelet fake-runtime %v: exit %d\n%s", args, code, out)
		}
	}
	fault("runtime-not-ready", "--reason", "LabBroken", "--message", "broken for the lab")
	framework.Eventually(t, time.Minute, "Ready=False naming the runtime", func() (bool, string) {
		status, msg := readyCondition(name)
		return status == corev1.ConditionFalse && strings.Contains(msg, "LabBroken") && strings.Contains(msg, "container runtime"), msg
	})
	fault("runtime-ready")
	waitReady(t, name, corev1.ConditionTrue, time.Minute)
}

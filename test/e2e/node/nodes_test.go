package node

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// `minikubelet --nodes 50` is 50 independent node agents in one process, as kubemark's hollow
// nodes but each a real node: its own TLS-bootstrapped client certificate for system:node:<name>
// (so NodeRestriction keeps it off the other nodes), its own Lease, and its own kubelet API, which
// the API server reaches through that node's daemonEndpoints for `kubectl logs`. SIGTERM stops
// them all and the process exits 0.
func TestManyNodesInOneProcess(t *testing.T) {
	const nodes, prefix = 50, "e2e-multi-"
	ctx := context.Background()
	names := make([]string, nodes)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i+1)
	}
	t.Cleanup(func() {
		for _, name := range names {
			deleteNodeArtifacts(t, name)
		}
	})
	rootDir := t.TempDir()
	kubelet := framework.StartProcess(t, minikubelet,
		"--nodes", strconv.Itoa(nodes), "--node-name-prefix", prefix,
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig,
		"--root-dir", rootDir,
		"--node-ip", "127.0.0.1", "--address", "127.0.0.1",
		"--node-capacity", "cpu=8,memory=16Gi,ephemeral-storage=50Gi")

	framework.Eventually(t, 4*time.Minute, fmt.Sprintf("%d nodes %s1…%s%d Ready", nodes, prefix, prefix, nodes), func() (bool, string) {
		var notReady []string
		for _, name := range names {
			if status, _ := readyCondition(name); status != corev1.ConditionTrue {
				notReady = append(notReady, name)
			}
		}
		return len(notReady) == 0, fmt.Sprintf("%d not Ready yet, e.g. %v", len(notReady), notReady[:min(3, len(notReady))])
	})

	// Each node has its own identity: a client certificate for system:node:<name> in its own
	// directory, from its own CSR, different from every other node's.
	serials := map[string]string{}
	ports := map[int32]string{}
	for _, name := range names {
		cert := clientCertificate(t, filepath.Join(rootDir, name, "kubeconfig"))
		if cert.Subject.CommonName != "system:node:"+name || strings.Join(cert.Subject.Organization, ",") != "system:nodes" {
			t.Errorf("node %s: client certificate is for %s %v", name, cert.Subject.CommonName, cert.Subject.Organization)
		}
		if other, dup := serials[cert.SerialNumber.String()]; dup {
			t.Errorf("nodes %s and %s share a client certificate", name, other)
		}
		serials[cert.SerialNumber.String()] = name
		if n := len(csrsFor(t, name)); n != 1 {
			t.Errorf("node %s: %d CSRs, want its own one", name, n)
		}
		if lease := waitLease(t, name); *lease.Spec.HolderIdentity != name {
			t.Errorf("node %s: Lease held by %s", name, *lease.Spec.HolderIdentity)
		}
		node, err := cluster.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
		if other, dup := ports[port]; dup || port == 0 {
			t.Errorf("node %s publishes kubelet port %d (also %q's)", name, port, other)
		}
		ports[port] = name
	}

	// NodeRestriction applies to each identity: node 1 may label itself, not node 2.
	node1 := nodeClient(t, filepath.Join(rootDir, names[0], "kubeconfig"))
	patch := []byte(`{"metadata":{"labels":{"e2e.minikubelet.io/touched":"yes"}}}`)
	if _, err := node1.CoreV1().Nodes().Patch(ctx, names[0], types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Errorf("node %s cannot label its own Node: %v", names[0], err)
	}
	if _, err := node1.CoreV1().Nodes().Patch(ctx, names[1], types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("node %s patched node %s: err = %v, want Forbidden", names[0], names[1], err)
	}

	// A pod bound to one node runs there, and its logs come from that node's own kubelet API.
	target := names[nodes/2]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-multi-logs", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:      target,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"echo", "hello from " + target}}},
		},
	}
	if _, err := cluster.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = cluster.Client.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	framework.Eventually(t, time.Minute, "pod Succeeded on "+target, func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodSucceeded, string(p.Status.Phase)
	})
	out, err := cluster.KubectlOutput("logs", "-n", "default", pod.Name)
	if err != nil || strings.TrimSpace(out) != "hello from "+target {
		t.Errorf("kubectl logs = %q, %v; want %q", out, err, "hello from "+target)
	}

	// Each node's fake runtime gives pod IPs from a loopback range of its own (node i:
	// 127.88.i.0/24 for i < 256), so pods on two nodes never share an IP.
	for _, i := range []int{1, nodes} {
		ipPod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-multi-ip-%d", i), Namespace: "default"},
			Spec: corev1.PodSpec{
				NodeName:   names[i-1],
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "infinity"}}},
			},
		}
		if _, err := cluster.Client.CoreV1().Pods("default").Create(ctx, ipPod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			zero := int64(0)
			_ = cluster.Client.CoreV1().Pods("default").Delete(ctx, ipPod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
		want := netip.MustParsePrefix(fmt.Sprintf("127.88.%d.0/24", i))
		framework.Eventually(t, time.Minute, fmt.Sprintf("pod %s Running with an IP in %s", ipPod.Name, want), func() (bool, string) {
			p, err := cluster.Client.CoreV1().Pods("default").Get(ctx, ipPod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ip, err := netip.ParseAddr(p.Status.PodIP)
			return p.Status.Phase == corev1.PodRunning && err == nil && want.Contains(ip), fmt.Sprintf("%s, IP %q", p.Status.Phase, p.Status.PodIP)
		})
	}

	// SIGTERM stops every agent; the process exits cleanly.
	if err := kubelet.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := kubelet.Wait(time.Minute); err != nil || code != 0 {
		t.Errorf("after SIGTERM: exit %d, %v\n%s", code, err, tail(kubelet.Log(), 40))
	}
}

// clientCertificate is the client certificate a node's kubeconfig points at.
func clientCertificate(t *testing.T, kubeconfig string) *x509.Certificate {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("%s: %v", kubeconfig, err)
	}
	data := cfg.CertData
	if len(data) == 0 {
		if data, err = os.ReadFile(cfg.CertFile); err != nil {
			t.Fatalf("%s: %v", kubeconfig, err)
		}
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM certificate", kubeconfig)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", kubeconfig, err)
	}
	return cert
}

func nodeClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func tail(s string, lines int) string {
	all := strings.Split(s, "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

package security

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string // the binary under test, built with the race detector (framework.BuildMinikubelet)
	// verboseMinikubelet is the same code built without the race detector, for the test that
	// must run at -v=10: from -v=9 client-go's debugging round tripper traces each request's
	// dial and TLS handshake, and its trace callbacks race with the request when a dial outlives
	// it (k8s.io/client-go@v0.36.3 transport/round_trippers.go:572 writes reqInfo.TLSHandshake
	// from the dial's goroutine while :622 reads it). That race is client-go's, in logging only.
	verboseMinikubelet string
)

func TestMain(m *testing.M) {
	binDir, err := os.MkdirTemp("", "minikubelet-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if minikubelet, err = framework.BuildMinikubelet(binDir); err == nil {
		verboseMinikubelet, err = buildWithoutRace(binDir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(binDir)
		os.Exit(1)
	}
	code := framework.Main(m.Run, framework.Options{}, &cluster)
	os.RemoveAll(binDir)
	os.Exit(code)
}

// buildWithoutRace compiles ./cmd/minikubelet into dir as minikubelet-norace.
func buildWithoutRace(dir string) (string, error) {
	bin := filepath.Join(dir, "minikubelet-norace")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/minikubelet")
	cmd.Dir = framework.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/minikubelet: %v\n%s", err, out)
	}
	return bin, nil
}

// node is a minikubelet run for one test, with the in-process fake runtime.
type node struct {
	name    string
	rootDir string
	args    []string
	proc    *framework.Process
}

// startNode runs minikubelet as node name — joined by TLS bootstrap, its kubelet API on a free
// port of 127.0.0.1 — and waits until the node is Ready. Its Node, Lease and CSRs are deleted
// when the test ends.
func startNode(t *testing.T, name string, extra ...string) *node {
	t.Helper()
	return startNodeWith(t, minikubelet, name, extra...)
}

// startNodeWith is startNode with the binary bin.
func startNodeWith(t *testing.T, bin, name string, extra ...string) *node {
	t.Helper()
	rootDir, err := os.MkdirTemp("", "mksec") // short: the fake runtime's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	n := &node{name: name, rootDir: rootDir}
	n.args = append([]string{
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)),
	}, extra...)
	t.Cleanup(func() { deleteNodeArtifacts(name) }) // runs after the process is killed
	n.proc = framework.StartProcess(t, bin, n.args...)
	waitReady(t, name)
	return n
}

func waitReady(t *testing.T, name string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, "node "+name+" Ready", func() (bool, string) {
		n, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, c.Message
			}
		}
		return false, "no Ready condition"
	})
}

// deleteNodeArtifacts removes what a node leaves in the cluster: its Node, Lease and CSRs.
func deleteNodeArtifacts(name string) {
	ctx := context.Background()
	_ = cluster.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	_ = cluster.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
	csrs, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, csr := range csrs.Items {
		if csr.Spec.Username == "system:node:"+name {
			_ = cluster.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
		}
	}
}

// namespace creates a namespace for one test and deletes it afterwards.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-security-"}}
	ns, err := cluster.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// podOn is a pod bound to nodeName (no scheduler in between) that runs until deleted.
func podOn(nodeName, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName:                      nodeName,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}}},
		},
	}
}

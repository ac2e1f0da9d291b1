package doctor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// doctorTimeout bounds one doctor run; every network check in it has a 5 s timeout.
const doctorTimeout = 2 * time.Minute

// check is one check in doctor's report: "[FAIL] message" and its "fix: …" lines.
type check struct{ status, message, fix string }

// parseReport reads doctor's output; lines that are not part of a check (the summary, logs) are skipped.
func parseReport(out string) []check {
	var checks []check
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "["):
			status, message, _ := strings.Cut(line, "]")
			checks = append(checks, check{status: strings.TrimPrefix(status, "["), message: strings.TrimSpace(message)})
		case len(checks) > 0 && strings.HasPrefix(line, "       fix: "):
			checks[len(checks)-1].fix = strings.TrimPrefix(line, "       fix: ")
		case len(checks) > 0 && strings.HasPrefix(line, "            "):
			checks[len(checks)-1].fix += "\n" + strings.TrimSpace(line)
		}
	}
	return checks
}

// find returns the check whose message contains what, failing the test if there is none.
func find(t *testing.T, out, what string) check {
	t.Helper()
	for _, c := range parseReport(out) {
		if strings.Contains(c.message, what) {
			return c
		}
	}
	t.Fatalf("no check mentions %q in:\n%s", what, out)
	return check{}
}

// shortTempDir keeps socket paths under the 107-byte unix limit.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "doctor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// startFakeRuntime runs `minikubelet fake-runtime serve` on <dir>/fake.sock and waits for its socket.
func startFakeRuntime(t *testing.T, dir string) (*framework.Process, string) {
	t.Helper()
	socket := filepath.Join(dir, "fake.sock")
	p := framework.StartProcess(t, minikubelet, "fake-runtime", "serve", "--socket", socket)
	framework.Eventually(t, 30*time.Second, "the fake runtime's socket", func() (bool, string) {
		_, err := os.Stat(socket)
		return err == nil, "no socket yet"
	})
	return p, socket
}

// stop sends SIGTERM and waits for a clean exit, as a user's Ctrl-C.
func stop(t *testing.T, p *framework.Process) {
	t.Helper()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(30 * time.Second); err != nil || code != 0 {
		t.Errorf("after SIGTERM: exit code %d, %v; want a clean exit 0", code, err)
	}
}

// nodeFlags are the flags of `make run`, with a fresh root dir, a free port and the given runtime.
func nodeFlags(t *testing.T, node, bootstrapKubeconfig, rootDir, socket string) []string {
	t.Helper()
	return []string{
		"--bootstrap-kubeconfig", bootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", node, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)),
		"--container-runtime-endpoint", "unix://" + socket,
	}
}

func runDoctor(t *testing.T, flags []string) (int, string) {
	t.Helper()
	code, out := framework.RunToExit(t, doctorTimeout, minikubelet, append([]string{"doctor"}, flags...)...)
	t.Logf("minikubelet doctor (exit %d):\n%s", code, out)
	return code, out
}

// requireAllOK checks that doctor passed: exit 0, every check OK, and each of want among them.
func requireAllOK(t *testing.T, code int, out string, want ...string) {
	t.Helper()
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	checks := parseReport(out)
	for _, c := range checks {
		if c.status != "OK" {
			t.Errorf("[%s] %s (fix: %s); want every check OK", c.status, c.message, c.fix)
		}
	}
	for _, w := range want {
		find(t, out, w)
	}
	if !strings.Contains(out, "doctor: "+strconv.Itoa(len(checks))+" of "+strconv.Itoa(len(checks))+" checks passed") {
		t.Errorf("no summary saying all %d checks passed", len(checks))
	}
}

// requireFail checks that doctor failed (exit 1) with a FAIL check mentioning what, whose fix
// contains fix.
func requireFail(t *testing.T, code int, out, what, fix string) {
	t.Helper()
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	c := find(t, out, what)
	if c.status != "FAIL" || !strings.Contains(c.fix, fix) {
		t.Errorf("[%s] %s\nfix: %s\nwant FAIL with a fix containing %q", c.status, c.message, c.fix, fix)
	}
	if !strings.Contains(out, "minikubelet: doctor: ") || !strings.Contains(out, "failed") {
		t.Errorf("no failing summary line in:\n%s", out)
	}
}

// A node set up as `make run` sets it up passes every check: before it joins (TLS bootstrap
// ahead) and after (the node's own kubeconfig, and the RBAC of certificate rotation).
func TestWorkingSetupIsAllOK(t *testing.T) {
	const node = "e2e-doctor-ok"
	t.Cleanup(func() { deleteNodeArtifacts(t, node) })
	dir := shortTempDir(t)
	runtime, socket := startFakeRuntime(t, dir)
	rootDir := filepath.Join(dir, "root")
	flags := nodeFlags(t, node, cluster.BootstrapKubeconfig, rootDir, socket)

	t.Run("before joining", func(t *testing.T) {
		code, out := runDoctor(t, flags)
		requireAllOK(t, code, out,
			"reachable, CA verifies", "not written yet", "bootstrap token", "may create certificatesigningrequests:",
			"may create certificatesigningrequests/nodeclient", "version skew", "answers CRI Version", "--cert-dir", "--root-dir", "127.0.0.1:")
		if _, err := os.Stat(rootDir); !os.IsNotExist(err) {
			t.Errorf("doctor created --root-dir %s (%v); it must change nothing", rootDir, err)
		}
	})
	t.Run("after joining", func(t *testing.T) {
		kubelet := framework.StartProcess(t, minikubelet, flags...)
		framework.Eventually(t, 2*time.Minute, "TLS bootstrap to write the kubeconfig", func() (bool, string) {
			_, err := os.Stat(filepath.Join(rootDir, "kubeconfig"))
			return err == nil, "no kubeconfig yet"
		})
		stop(t, kubelet) // its port must be free again for doctor
		code, out := runDoctor(t, flags)
		requireAllOK(t, code, out, "client certificate system:node:"+node, "system:node:"+node+" may create certificatesigningrequests/selfnodeclient")
	})
	stop(t, runtime)
}

// A bootstrap kubeconfig with the wrong CA, or a wrong token, is named with its own fix.
func TestBrokenBootstrapKubeconfig(t *testing.T) {
	dir := shortTempDir(t)
	runtime, socket := startFakeRuntime(t, dir)
	defer stop(t, runtime)

	t.Run("wrong CA", func(t *testing.T) {
		path := bootstrapKubeconfigWith(t, func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) {
			c.CertificateAuthorityData = otherCA(t)
		})
		code, out := runDoctor(t, nodeFlags(t, "e2e-doctor-ca", path, filepath.Join(dir, "ca"), socket))
		requireFail(t, code, out, "wrong CA", "--certificate-authority=")
		if c := find(t, out, "wrong CA"); !strings.Contains(c.message, "unknown authority") {
			t.Errorf("the message does not give the TLS error: %s", c.message)
		}
		if c := find(t, out, "bootstrap token"); c.status != "SKIP" {
			t.Errorf("token check after an unreachable API server: [%s] %s; want SKIP", c.status, c.message)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		path := bootstrapKubeconfigWith(t, func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token = "abcdef.0123456789abcdef"
		})
		code, out := runDoctor(t, nodeFlags(t, "e2e-doctor-token", path, filepath.Join(dir, "token"), socket))
		requireFail(t, code, out, "401 Unauthorized", "kubeadm token create")
		if c := find(t, out, "401 Unauthorized"); !strings.Contains(c.fix, "kubectl config set-credentials") {
			t.Errorf("the fix does not say how to put a new token into the kubeconfig: %s", c.fix)
		}
		if strings.Contains(out, "0123456789abcdef") {
			t.Error("doctor printed the token's secret")
		}
		if c := find(t, out, "reachable, CA verifies"); c.status != "OK" {
			t.Errorf("the CA is right: [%s] %s; want OK", c.status, c.message)
		}
	})
}

// Without kubeadm:node-autoapprove-bootstrap, kube-controller-manager never approves the
// bootstrap CSR; doctor names the missing permission and the binding that grants it.
func TestMissingNodeClientAutoApproval(t *testing.T) {
	if os.Getenv("MINIKUBELET_E2E_KUBECONFIG") != "" {
		t.Skip("deletes a ClusterRoleBinding: runs only on this package's own control plane, not a shared one")
	}
	const name = "kubeadm:node-autoapprove-bootstrap" // hack/cluster/bootstrap.go, as kubeadm names it
	ctx := context.Background()
	bindings := cluster.Client.RbacV1().ClusterRoleBindings()
	saved, err := bindings.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := bindings.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		restored := saved.DeepCopy()
		restored.ResourceVersion, restored.UID = "", ""
		if _, err := bindings.Create(ctx, restored, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("restore ClusterRoleBinding %s: %v", name, err)
		}
		waitForNodeClientPermission(t, true)
	})
	waitForNodeClientPermission(t, false) // the API server's RBAC cache has seen the deletion

	dir := shortTempDir(t)
	runtime, socket := startFakeRuntime(t, dir)
	defer stop(t, runtime)
	code, out := runDoctor(t, nodeFlags(t, "e2e-doctor-rbac", cluster.BootstrapKubeconfig, filepath.Join(dir, "root"), socket))
	requireFail(t, code, out, "may not create certificatesigningrequests/nodeclient",
		"kubectl create clusterrolebinding "+name+" --clusterrole=system:certificates.k8s.io:certificatesigningrequests:nodeclient --group=system:bootstrappers:kubeadm:default-node-token")
	if c := find(t, out, "may create certificatesigningrequests:"); c.status != "OK" {
		t.Errorf("creating CSRs is still allowed: [%s] %s; want OK", c.status, c.message)
	}
}

// A runtime that died (its socket file left behind, nobody listening) is named, with how to start one.
func TestDeadRuntimeSocket(t *testing.T) {
	dir := shortTempDir(t)
	runtime, socket := startFakeRuntime(t, dir)
	if err := runtime.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := runtime.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("the killed runtime's socket should be left behind: %v", err)
	}
	code, out := runDoctor(t, nodeFlags(t, "e2e-doctor-runtime", cluster.BootstrapKubeconfig, filepath.Join(dir, "root"), socket))
	requireFail(t, code, out, "container runtime", "minikubelet fake-runtime serve --socket "+socket)
	if c := find(t, out, "bootstrap token"); c.status != "OK" {
		t.Errorf("the cluster side is fine: [%s] %s; want OK", c.status, c.message)
	}
}

// waitForNodeClientPermission waits until the bootstrap token's identity may (or may not) create
// certificatesigningrequests/nodeclient, as the API server's authorizer now answers.
func waitForNodeClientPermission(t *testing.T, allowed bool) {
	t.Helper()
	user, groups := bootstrapIdentity(t)
	framework.Eventually(t, 30*time.Second, "the RBAC change to take effect", func() (bool, string) {
		review, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: "create", Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "nodeclient",
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return review.Status.Allowed == allowed, "allowed=" + strconv.FormatBool(review.Status.Allowed)
	})
}

// bootstrapIdentity is who the cluster's bootstrap token authenticates as (system:bootstrap:<id>).
func bootstrapIdentity(t *testing.T) (string, []string) {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(cluster.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(raw.AuthInfos[raw.Contexts[raw.CurrentContext].AuthInfo].Token, ".")
	return "system:bootstrap:" + id, []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"}
}

// bootstrapKubeconfigWith writes a copy of the cluster's bootstrap kubeconfig with edit applied.
func bootstrapKubeconfigWith(t *testing.T, edit func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(cluster.BootstrapKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kctx := raw.Contexts[raw.CurrentContext]
	edit(raw.Clusters[kctx.Cluster], raw.AuthInfos[kctx.AuthInfo])
	path := filepath.Join(t.TempDir(), "bootstrap.kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// otherCA is a CA certificate that did not sign the API server's certificate.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not-the-cluster-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// deleteNodeArtifacts removes what a joined node left in the cluster: its CSRs, Node and Lease.
func deleteNodeArtifacts(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	csrs, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, csr := range csrs.Items {
			block, _ := pem.Decode(csr.Spec.Request)
			if block == nil {
				continue
			}
			if req, err := x509.ParseCertificateRequest(block.Bytes); err == nil && req.Subject.CommonName == "system:node:"+node {
				_ = cluster.Client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
			}
		}
	}
	_ = cluster.Client.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
	_ = cluster.Client.CoordinationV1().Leases("kube-node-lease").Delete(ctx, node, metav1.DeleteOptions{})
}

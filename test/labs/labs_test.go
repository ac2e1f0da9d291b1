// Package labs walks through the course labs (labs/NN-*/README.md) the way a student does — the
// same kubectl commands, the same fake-runtime faults, the same config files — against a fresh
// local control plane and one minikubelet node, and runs each lab's checker (labs/check, what
// `make lab-check LAB=NN` runs) on the result. Before each walkthrough the checker must fail: a
// check that passes on a cluster where the student did nothing checks nothing.
//
// The labs run in order on one node, as in the course. `make labs-test` runs this package.
package labs

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/fakeruntime"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string // bin/minikubelet, built with -race
	labCheck    string // labs/check, as `make lab-check` builds it
)

func TestMain(m *testing.M) {
	binDir, err := os.MkdirTemp("", "minikubelet-labs-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if minikubelet, err = framework.BuildMinikubelet(binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	labCheck = filepath.Join(binDir, "lab-check")
	build := exec.Command("go", "build", "-o", labCheck, "./labs/check")
	build.Dir = framework.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./labs/check: %v\n%s", err, out)
		os.Exit(1)
	}
	code := framework.Main(m.Run, framework.Options{}, &cluster)
	os.RemoveAll(binDir)
	os.Exit(code)
}

// labDir is a lab's directory in the repository, for its manifests and config files.
func labDir(name string) string { return filepath.Join(framework.RepoRoot(), "labs", name) }

// node is the course's one minikubelet, as `make run` starts it (bootstrap kubeconfig, own root
// dir, node IP and kubelet API on 127.0.0.1), on a free port.
type node struct {
	owner   *testing.T // TestLabs: every process started lives until it ends
	name    string
	rootDir string
	port    int
	proc    *framework.Process
}

func (n *node) socket() string { return filepath.Join(n.rootDir, "fake-runtime.sock") }

// start runs minikubelet with make run's flags and extra ones (e.g. --config), and waits until
// the node is Ready.
func (n *node) start(t *testing.T, extra ...string) {
	t.Helper()
	args := append([]string{
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", n.rootDir,
		"--hostname-override", n.name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(n.port), "-v", "2",
	}, extra...)
	n.proc = framework.StartProcess(n.owner, minikubelet, args...)
	waitFor(t, time.Minute, "node "+n.name+" Ready", func() (bool, string) {
		node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, c.Reason
			}
		}
		return false, "no Ready condition"
	})
}

// restart stops minikubelet as Ctrl-C does and starts it again with extra flags, as a student
// restarts `make run ARGS=…`.
func (n *node) restart(t *testing.T, extra ...string) {
	t.Helper()
	if err := n.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, err := n.proc.Wait(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("minikubelet did not exit cleanly on SIGTERM: code %d, %v", code, err)
	}
	n.start(t, extra...)
}

// labCheck runs the checker for lab against our cluster and node; it returns its exit code and output.
func (n *node) labCheck(t *testing.T, lab string) (int, string) {
	t.Helper()
	code, out := framework.RunToExit(t, 2*time.Minute, labCheck, "--lab", lab,
		"--kubeconfig", cluster.AdminKubeconfig, "--bootstrap-kubeconfig", cluster.BootstrapKubeconfig,
		"--root-dir", n.rootDir, "--node", n.name)
	return code, out
}

// expectMissing: before the walkthrough, the checker fails and says what is missing.
func (n *node) expectMissing(t *testing.T, lab, says string) {
	t.Helper()
	code, out := n.labCheck(t, lab)
	if code != 1 || !strings.Contains(out, "[MISSING] "+says) {
		t.Fatalf("lab-check %s: want exit code 1 and a line \"[MISSING] %s…\"; got exit code %d:\n%s", lab, says, code, out)
	}
	t.Logf("lab-check %s before the walkthrough (exit code 1, as it should):\n%s", lab, out)
}

// expectPass: after the walkthrough, the checker passes within timeout (a student runs it again
// after a few seconds, too: restarts, back-offs and syncs take their time).
func (n *node) expectPass(t *testing.T, lab string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		code, out := n.labCheck(t, lab)
		if code == 0 {
			t.Logf("lab-check %s after the walkthrough:\n%s", lab, out)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab-check %s still fails after %s (exit code %d):\n%s", lab, timeout, code, out)
		}
		time.Sleep(2 * time.Second)
	}
}

// kubectl runs the cluster's kubectl as the admin, as the labs' READMEs do.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := cluster.KubectlOutput(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// fakeRuntime runs `minikubelet fake-runtime VERB … --socket <root>/fake-runtime.sock`.
func (n *node) fakeRuntime(t *testing.T, args ...string) string {
	t.Helper()
	code, out := framework.RunToExit(t, 30*time.Second, minikubelet, append(append([]string{"fake-runtime"}, args...), "--socket", n.socket())...)
	if code != 0 {
		t.Fatalf("minikubelet fake-runtime %s: exit code %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// waitFor polls cond every 500 ms; the timeouts are generous upper bounds, not assertions on speed.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func waitRunning(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		waitFor(t, time.Minute, "pod "+name+" Running", func() (bool, string) {
			pod, err := cluster.Client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return pod.Status.Phase == corev1.PodRunning, string(pod.Status.Phase)
		})
	}
}

// TestLabs runs the labs in order on one node, as a student does. Labs 09, 10 and 12 also run alone
// (go test -run 'TestLabs/10'): they start the node when lab 01 did not.
func TestLabs(t *testing.T) {
	rootDir, err := os.MkdirTemp("", "mkl") // short: the fake runtime's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	n := &node{owner: t, name: "lab-node", rootDir: rootDir, port: framework.FreePort(t)}
	t.Cleanup(func() { cleanUp(n.name) })

	t.Run("00-one-pods-life", lab00) // no cluster, no node: a Go test and its check
	if !t.Run("01-quick-start", n.lab01) {
		return // no node, no lab
	}
	t.Run("02-tls-bootstrap", n.lab02)
	t.Run("03-node-registration-and-lease", n.lab03)
	t.Run("04-pleg", n.lab04)
	t.Run("05-pod-workers", n.lab05)
	t.Run("06-status-manager", n.lab06)
	t.Run("07-secret-configmap-managers", n.lab07)
	t.Run("08-kubectl-exec", n.lab08)
	t.Run("09-probes-and-init-containers", n.lab09)
	t.Run("10-resource-management", n.lab10)
	t.Run("12-volume-manager", n.lab12) // 11 is kept for the kubeadm cluster lab
}

// Lab 01: make run, then a pod, then the kubelet restarted.
func (n *node) lab01(t *testing.T) {
	n.expectMissing(t, "01", "node "+n.name+" is not registered")
	n.start(t)
	kubectl(t, "run", "hello", "--image=busybox:1.36", "--", "sleep", "infinity")
	waitReady(t, "hello", true)
	// Exercise 4 is still missing: hello never restarted.
	if code, out := n.labCheck(t, "01"); code != 1 || !strings.Contains(out, "[MISSING] pod default/hello has RESTARTS 0") {
		t.Fatalf("lab-check 01 before exercise 4: exit code %d:\n%s", code, out)
	}
	n.restart(t) // exercise 4: Ctrl-C, make run
	n.expectPass(t, "01", time.Minute)
}

// Lab 02: the exercise "deny a CSR": without the auto-approval binding a second node's CSR stays
// Pending; the student denies it and that node exits with the reason; then the binding comes back.
func (n *node) lab02(t *testing.T) {
	n.expectMissing(t, "02", "no CSR by system:bootstrap:")
	t.Logf("kubectl get csr:\n%s", kubectl(t, "get", "csr"))
	kubectl(t, "delete", "clusterrolebinding", "kubeadm:node-autoapprove-bootstrap")
	t.Cleanup(restoreAutoApproval) // whatever happens below, later labs (and a shared cluster) need it

	second := framework.StartProcess(t, minikubelet, "--bootstrap-kubeconfig", cluster.BootstrapKubeconfig,
		"--root-dir", t.TempDir(), "--hostname-override", "lab02-denied", "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(framework.FreePort(t)))
	var pending string
	waitFor(t, time.Minute, "a Pending CSR from lab02-denied", func() (bool, string) {
		list, err := cluster.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, csr := range list.Items {
			if len(csr.Status.Conditions) == 0 && csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName {
				pending = csr.Name
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d CSRs, none Pending", len(list.Items))
	})
	t.Logf("kubectl get csr:\n%s", kubectl(t, "get", "csr"))
	kubectl(t, "certificate", "deny", pending)
	code, err := second.Wait(time.Minute)
	if err != nil || code != 1 || !strings.Contains(second.Log(), "was DENIED") {
		t.Fatalf("the denied node: exit code %d (%v), want 1 with 'was DENIED' in its log:\n%s", code, err, second.Log())
	}
	t.Logf("the denied node exited 1:\n%s", lastLines(second.Log(), 1))

	// The check notices the missing binding before the student puts it back.
	if code, out := n.labCheck(t, "02"); code != 1 || !strings.Contains(out, "[MISSING] ClusterRoleBinding kubeadm:node-autoapprove-bootstrap is missing") {
		t.Fatalf("lab-check 02 without the binding: exit code %d:\n%s", code, out)
	}
	kubectl(t, "create", "clusterrolebinding", "kubeadm:node-autoapprove-bootstrap",
		"--clusterrole=system:certificates.k8s.io:certificatesigningrequests:nodeclient",
		"--group=system:bootstrappers:kubeadm:default-node-token")
	n.expectPass(t, "02", 30*time.Second)
}

// Lab 03: a shorter Lease from a config file, then the kubelet frozen (SIGSTOP) until
// kube-controller-manager marks the node NotReady, then resumed (SIGCONT).
func (n *node) lab03(t *testing.T) {
	n.expectMissing(t, "03", "no NodeNotReady event")
	n.restart(t, "--config", filepath.Join(labDir("03-node-registration-and-lease"), "kubelet-lease.yaml"))
	waitFor(t, 30*time.Second, "a 12 s Lease", func() (bool, string) {
		lease, err := cluster.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), n.name, metav1.GetOptions{})
		if err != nil || lease.Spec.LeaseDurationSeconds == nil {
			return false, fmt.Sprint(err)
		}
		return *lease.Spec.LeaseDurationSeconds == 12, fmt.Sprint(*lease.Spec.LeaseDurationSeconds)
	})

	if err := n.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitFor(t, 2*time.Minute, "kube-controller-manager to mark the node NotReady", func() (bool, string) {
		node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status != corev1.ConditionTrue, string(c.Status)
			}
		}
		return false, "no Ready condition"
	})
	t.Logf("the node went NotReady %s after SIGSTOP (the test cluster's grace period is 16 s)", time.Since(stopped).Round(time.Second))
	if err := n.proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	n.expectPass(t, "03", time.Minute)
}

// Lab 04: kill a container behind the kubelet's back; flip a sandbox NOTREADY; slow the runtime down.
func (n *node) lab04(t *testing.T) {
	n.expectMissing(t, "04", "pod default/lab04-kill does not exist")
	kubectl(t, "run", "lab04-kill", "--image=busybox:1.36", "--", "sleep", "infinity")
	kubectl(t, "run", "lab04-sandbox", "--image=busybox:1.36", "--", "sleep", "infinity")
	waitRunning(t, "lab04-kill", "lab04-sandbox")

	containerID := kubectl(t, "get", "pod", "lab04-kill", "-o", "jsonpath={.status.containerStatuses[0].containerID}")
	_, id, _ := strings.Cut(containerID, "://")
	t.Log(n.fakeRuntime(t, "kill-container", id))

	var st fakeruntime.State
	if err := json.Unmarshal([]byte(n.fakeRuntime(t, "state")), &st); err != nil {
		t.Fatal(err)
	}
	sandboxID := ""
	for _, s := range st.Sandboxes {
		if s.Name == "lab04-sandbox" && s.Namespace == "default" {
			sandboxID = s.ID
		}
	}
	if sandboxID == "" {
		t.Fatalf("no sandbox of lab04-sandbox in the runtime: %+v", st.Sandboxes)
	}
	t.Log(n.fakeRuntime(t, "sandbox-not-ready", sandboxID))

	// Exercise 3: a slow runtime, until a relist took over a second; then undone.
	if code, out := n.labCheck(t, "04"); code != 1 || !strings.Contains(out, "[MISSING] all ") || !strings.Contains(out, "the runtime was never slow") {
		t.Fatalf("lab-check 04 before exercise 3: exit code %d:\n%s", code, out)
	}
	t.Log(n.fakeRuntime(t, "latency", "ListContainers", "2s"))
	n.waitSlowRelist(t)
	t.Log(n.fakeRuntime(t, "latency", "ListContainers", "0s"))
	n.expectPass(t, "04", time.Minute)
}

// waitSlowRelist waits until the kubelet's relist histogram counts a relist over 1.024 s
// (kubelet_api /metrics | grep pleg_relist_duration_seconds, as exercise 3 reads it).
func (n *node) waitSlowRelist(t *testing.T) {
	t.Helper()
	api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := cluster.AdminCert()
	if err != nil {
		t.Fatal(err)
	}
	const metric = "kubelet_pleg_relist_duration_seconds"
	waitFor(t, time.Minute, "a relist slower than 1.024 s", func() (bool, string) {
		_, body := api.Get(t, "/metrics", admin)
		values := map[string]string{}
		for _, line := range strings.Split(body, "\n") {
			if name, value, ok := strings.Cut(line, " "); ok && (name == metric+"_count" || name == metric+`_bucket{le="1.024"}`) {
				values[name] = value
			}
		}
		count, fast := values[metric+"_count"], values[metric+`_bucket{le="1.024"}`]
		return count != "" && count != fast, fmt.Sprintf("count %s, at most 1.024 s: %s", count, fast)
	})
}

// Lab 05: a crash loop under restartPolicy Always, one Failed run under Never.
func (n *node) lab05(t *testing.T) {
	n.expectMissing(t, "05", "pod default/lab05-crash does not exist")
	kubectl(t, "run", "lab05-crash", "--image=busybox:1.36", "--", "sh", "-c", "exit 1")
	kubectl(t, "run", "lab05-once", "--image=busybox:1.36", "--restart=Never", "--", "sh", "-c", "exit 1")
	waitRestarted(t, "lab05-crash")
	if code, out := n.labCheck(t, "05"); code != 1 || !strings.Contains(out, "[MISSING] the kubelet's journal shows no default/lab05-crash deleted") {
		t.Fatalf("lab-check 05 before exercise 3: exit code %d:\n%s", code, out)
	}
	// Exercise 3: delete the crash-looping pod, and create it again for the check.
	kubectl(t, "delete", "pod", "lab05-crash")
	kubectl(t, "run", "lab05-crash", "--image=busybox:1.36", "--", "sh", "-c", "exit 1")
	n.expectPass(t, "05", time.Minute)
}

// waitRestarted waits until the pod's first container has restarted at least once.
func waitRestarted(t *testing.T, name string) {
	t.Helper()
	waitFor(t, time.Minute, "pod "+name+" restarted", func() (bool, string) {
		pod, err := cluster.Client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || len(pod.Status.ContainerStatuses) == 0 {
			return false, fmt.Sprint(err)
		}
		return pod.Status.ContainerStatuses[0].RestartCount > 0, fmt.Sprint(pod.Status.ContainerStatuses[0].RestartCount)
	})
}

// Lab 06: the status minikubelet writes, and a deletion it finishes.
func (n *node) lab06(t *testing.T) {
	n.expectMissing(t, "06", "pod default/lab06-status does not exist")
	kubectl(t, "run", "lab06-status", "--image=busybox:1.36", "--", "sleep", "infinity")
	kubectl(t, "run", "lab06-doomed", "--image=busybox:1.36", "--", "sleep", "infinity")
	waitRunning(t, "lab06-status", "lab06-doomed")
	if code, out := n.labCheck(t, "06"); code != 1 || !strings.Contains(out, "[MISSING] pod default/lab06-doomed still exists") ||
		!strings.Contains(out, "[MISSING] pod lab06-status has no condition example.com/LabChecked") {
		t.Fatalf("lab-check 06 before exercises 3 and 4: exit code %d:\n%s", code, out)
	}
	// Exercise 3: a condition of our own, and a pod IP the kubelet overwrites at its next sync.
	kubectl(t, "patch", "pod", "lab06-status", "--subresource=status", "--type=strategic",
		"-p", `{"status":{"conditions":[{"type":"example.com/LabChecked","status":"True"}]}}`)
	kubectl(t, "patch", "pod", "lab06-status", "--subresource=status", "--type=merge",
		"-p", `{"status":{"podIP":"10.99.99.99","podIPs":[{"ip":"10.99.99.99"}]}}`)
	start := time.Now()
	kubectl(t, "delete", "pod", "lab06-doomed")
	t.Logf("kubectl delete pod lab06-doomed returned after %s", time.Since(start).Round(time.Millisecond))
	n.expectPass(t, "06", 30*time.Second)
}

// Lab 07: a Secret as a file and an env variable; the Secret updated; the file follows, the env
// does not. The README lets the default Watch strategy and 1 min sync run first; here the node
// starts right away with the exercise-4 config (Get strategy, 10 s sync) so the update shows in
// seconds.
func (n *node) lab07(t *testing.T) {
	n.expectMissing(t, "07", "Secret default/lab07-secret does not exist")
	n.restart(t, "--config", filepath.Join(labDir("07-secret-configmap-managers"), "kubelet-get.yaml"))
	kubectl(t, "apply", "-f", filepath.Join(labDir("07-secret-configmap-managers"), "lab07.yaml"))
	waitRunning(t, "lab07-app")
	if got := kubectl(t, "exec", "lab07-app", "--", "cat", "/etc/secret/password"); got != "s3cret" {
		t.Fatalf("cat /etc/secret/password = %q, want s3cret", got)
	}
	kubectl(t, "patch", "secret", "lab07-secret", "-p", `{"stringData":{"password":"n3w-value"}}`)
	n.expectPass(t, "07", time.Minute)
	if got := strings.TrimSpace(kubectl(t, "exec", "lab07-app", "--", "printenv", "PASSWORD")); got != "s3cret" {
		t.Errorf("printenv PASSWORD = %q after the update; the env is set at container start and should still be s3cret", got)
	}
}

// Lab 08: kubectl exec through the API server and the kubelet API; the checker port-forwards too.
func (n *node) lab08(t *testing.T) {
	n.expectMissing(t, "08", "pod default/lab08-shell does not exist")
	kubectl(t, "run", "lab08-shell", "--image=busybox:1.36", "--", "sleep", "infinity")
	waitRunning(t, "lab08-shell")
	if got := kubectl(t, "exec", "lab08-shell", "--", "echo", "hello", "from", "lab08"); got != "hello from lab08\n" {
		t.Errorf("kubectl exec lab08-shell -- echo hello from lab08 printed %q", got)
	}
	// The checker's own execs leave nothing: exercises 1 and 4 are still missing.
	if code, out := n.labCheck(t, "08"); code != 1 || !strings.Contains(out, "[MISSING] /tmp/lab08 is not in lab08-shell") ||
		!strings.Contains(out, "[MISSING] /tmp/knocked is not in lab08-shell") {
		t.Fatalf("lab-check 08 before exercises 1 and 4: exit code %d:\n%s", code, out)
	}
	// Exercise 1: an exec that writes a file and exits 3.
	if out, err := cluster.KubectlOutput("exec", "lab08-shell", "--", "sh", "-c", "echo written by exec > /tmp/lab08; exit 3"); err == nil ||
		!strings.Contains(out, "command terminated with exit code 3") {
		t.Errorf("kubectl exec lab08-shell -- sh -c \"echo … > /tmp/lab08; exit 3\": %v\n%s", err, out)
	}
	// Exercise 4: POST /run as the admin (kubelet_api … -X POST).
	n.kubeletAPIPost(t, "/run/default/lab08-shell/lab08-shell?cmd=touch+/tmp/knocked")
	n.expectPass(t, "08", time.Minute)
}

// kubeletAPIPost POSTs to the node's kubelet API as the cluster admin, as labs/env.sh's
// kubelet_api PATH -X POST does, and fails the test unless it answers 200.
func (n *node) kubeletAPIPost(t *testing.T, path string) {
	t.Helper()
	api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := cluster.AdminCert()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: api.Roots, Certificates: []tls.Certificate{admin}, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: tr}).Post(fmt.Sprintf("https://127.0.0.1:%d%s", n.port, path), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", path, resp.Status, body)
	}
}

// Lab 09: a liveness probe that restarts, a readiness probe flipped both ways with kubectl exec,
// init containers in order, a failing one under restartPolicy Always and Never, a native sidecar
// beside a Job-like app, a pod with a sidecar deleted: the app's preStop hook first.
func (n *node) lab09(t *testing.T) {
	n.ensureStarted(t)
	n.expectMissing(t, "09", "pod default/lab09-liveness does not exist")
	dir := labDir("09-probes-and-init-containers")
	for _, manifest := range []string{"liveness.yaml", "readiness.yaml", "init.yaml", "init-fail.yaml", "sidecar.yaml"} {
		kubectl(t, "apply", "-f", filepath.Join(dir, manifest))
	}
	waitReady(t, "lab09-ready", true)
	if code, out := n.labCheck(t, "09"); code != 1 || !strings.Contains(out, "[MISSING] default/lab09-ready is Ready and its readiness probe never failed") {
		t.Fatalf("lab-check 09 before the readiness exercise: exit code %d:\n%s", code, out)
	}
	kubectl(t, "exec", "lab09-ready", "--", "rm", "/www/ready")
	waitReady(t, "lab09-ready", false)
	kubectl(t, "exec", "lab09-ready", "--", "touch", "/www/ready")
	waitReady(t, "lab09-ready", true)

	// Exercise 6, while the liveness probe takes its time.
	kubectl(t, "apply", "-f", filepath.Join(dir, "shutdown.yaml"))
	waitRunning(t, "lab09-shutdown")
	start := time.Now()
	kubectl(t, "delete", "pod", "lab09-shutdown")
	took := time.Since(start)
	t.Logf("kubectl delete pod lab09-shutdown returned after %s", took.Round(time.Millisecond))
	if took < 5*time.Second {
		t.Errorf("kubectl delete pod lab09-shutdown returned after %s: the app's preStop hook (sleep 5) runs before it stops, and its sidecar after it", took.Round(time.Millisecond))
	}
	// The liveness pod restarts about 45 s after it started (30 s healthy, then 3 failures 5 s apart).
	n.expectPass(t, "09", 2*time.Minute)
}

// ensureStarted starts the node when lab 01 did not (a lab run alone with -run).
func (n *node) ensureStarted(t *testing.T) {
	t.Helper()
	if n.proc == nil {
		n.start(t)
	}
}

// waitReady waits until the pod's Ready condition is ready (true) or not (false).
func waitReady(t *testing.T, name string, ready bool) {
	t.Helper()
	waitFor(t, time.Minute, fmt.Sprintf("pod %s Ready=%v", name, ready), func() (bool, string) {
		pod, err := cluster.Client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				return (c.Status == corev1.ConditionTrue) == ready, fmt.Sprintf("Ready=%s %s", c.Status, c.Reason)
			}
		}
		return false, "no Ready condition"
	})
}

// restoreAutoApproval puts kubeadm's auto-approval binding back if lab 02 left it deleted.
func restoreAutoApproval() {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:node-autoapprove-bootstrap"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:bootstrappers:kubeadm:default-node-token"}},
	}
	_, _ = cluster.Client.RbacV1().ClusterRoleBindings().Create(context.Background(), b, metav1.CreateOptions{})
}

// cleanUp deletes what the labs created, for a cluster that outlives the test
// (MINIKUBELET_E2E_KUBECONFIG); the local one is stopped anyway.
func cleanUp(nodeName string) {
	ctx := context.Background()
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	for _, pod := range []string{"hello", "lab04-kill", "lab04-sandbox", "lab05-crash", "lab05-once", "lab06-status", "lab07-app", "lab08-shell",
		"lab09-liveness", "lab09-ready", "lab09-init", "lab09-init-crash", "lab09-init-never", "lab09-sidecar", "lab09-shutdown",
		"lab10-guaranteed", "lab10-burstable", "lab10-besteffort", "lab10-too-big", "lab10-oom", "lab10-hog", "lab12-vol", "lab12-escape"} {
		_ = cluster.Client.CoreV1().Pods("default").Delete(ctx, pod, now)
	}
	_ = cluster.Client.CoreV1().Secrets("default").Delete(ctx, "lab07-secret", metav1.DeleteOptions{})
	_ = cluster.Client.CoreV1().ConfigMaps("default").Delete(ctx, "lab07-config", metav1.DeleteOptions{})
	_ = cluster.Client.CoreV1().ConfigMaps("default").Delete(ctx, "lab12-config", metav1.DeleteOptions{})
	_ = cluster.Client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "lab12-data", metav1.DeleteOptions{})
	_ = cluster.Client.CoreV1().PersistentVolumes().Delete(ctx, "lab12-pv", metav1.DeleteOptions{})
	_ = cluster.Client.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{})
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The checker's decisions are pure functions of what it read; these tests pin that each one can
// fail, and says what to do when it does. test/labs runs the checker against a real cluster.

func TestFindLab(t *testing.T) {
	for in, want := range map[string]string{
		"4": "04-pleg", "04": "04-pleg", "04-pleg": "04-pleg", "labs/04-pleg/": "04-pleg", "8": "08-kubectl-exec",
		"9": "", "": "", "pleg": "",
	} {
		l, ok := findLab(in)
		if ok != (want != "") || l.dir != want {
			t.Errorf("findLab(%q) = %q, %v; want %q", in, l.dir, ok, want)
		}
	}
}

// The defaults are hack/run.sh's: the same variables, the same paths.
func TestDefaultPathsFollowRunSh(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		env  func(string) string
		want paths
	}{
		{"make run", env("NODE_NAME", "Node-1"), paths{"_output/cluster/admin.kubeconfig", "_output/run", "node-1"}},
		{"other cluster dir and root", env("NODE_NAME", "n", "CLUSTER_DIR", "/c", "ROOT_DIR", "/r"), paths{"/c/admin.kubeconfig", "/r", "n"}},
		{"kind", env("NODE_NAME", "n", "CLUSTER", "kind"), paths{"_output/kind/admin.kubeconfig", "_output/kind/run", "n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := defaultPaths(tc.env); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Without a cluster, the first check says how to start one, and the rest are not run: exit 1.
func TestRunWithoutClusterSaysWhatToDo(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"--lab", "01", "--kubeconfig", filepath.Join(t.TempDir(), "none"), "--node", "n"},
		func(string) string { return "" }, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit code %d, want 1; output:\n%s%s", code, out.String(), errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[1], "[MISSING] no admin kubeconfig") || !strings.Contains(lines[1], "make run") ||
		!strings.Contains(lines[2], "not checked") || !strings.Contains(lines[5], "4 of 4 checks are missing") {
		t.Errorf("unexpected report:\n%s", out.String())
	}
	if code := run(context.Background(), []string{"--lab", "42"}, func(string) string { return "" }, &out, &errOut); code != 2 {
		t.Errorf("unknown lab: exit code %d, want 2", code)
	}
}

func running(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyAlways},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.88.0.9", StartTime: ptr.To(metav1.Now()),
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", ContainerID: "minikubelet-fake://abc", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}

func TestPodRunningResult(t *testing.T) {
	pending := running("p", "n")
	pending.Status.Phase = corev1.PodPending
	pending.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		ok   bool
		says string
	}{
		{"missing", nil, false, "create it: kubectl run"},
		{"unscheduled", running("p", ""), false, "not scheduled"},
		{"other node", running("p", "other"), false, "scheduled to node other"},
		{"pending", pending, false, "waits: ContainerCreating"},
		{"running", running("p", "n"), true, "Running and Ready"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := podRunningResult("default/p", tc.pod, "n", "kubectl run p")
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

// Lab 02: the CSR that got the certificate, and the one the student denied, are found by the
// bootstrap token's user and the requested CN.
func TestCSRs(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csrFor := func(name, user, cn string, conds ...certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequest {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
		if err != nil {
			t.Fatal(err)
		}
		csr := certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.CertificateSigningRequestSpec{
			Username: user, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName, Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		}}
		for _, c := range conds {
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: c})
			if c == certificatesv1.CertificateApproved {
				csr.Status.Certificate = []byte("issued")
			}
		}
		return csr
	}
	pendingOnly := []certificatesv1.CertificateSigningRequest{csrFor("csr-1", "system:bootstrap:abc", "system:node:n")}
	otherToken := []certificatesv1.CertificateSigningRequest{csrFor("csr-2", "system:bootstrap:zzz", "system:node:n", certificatesv1.CertificateApproved)}
	otherNode := []certificatesv1.CertificateSigningRequest{csrFor("csr-3", "system:bootstrap:abc", "system:node:m", certificatesv1.CertificateApproved)}
	good := []certificatesv1.CertificateSigningRequest{csrFor("csr-4", "system:bootstrap:abc", "system:node:n", certificatesv1.CertificateApproved)}
	denied := []certificatesv1.CertificateSigningRequest{csrFor("csr-5", "system:bootstrap:abc", "system:node:x", certificatesv1.CertificateDenied)}
	for name, csrs := range map[string][]certificatesv1.CertificateSigningRequest{"pending": pendingOnly, "other token": otherToken, "other node": otherNode} {
		if r := approvedCSR(csrs, "abc", "n"); r.ok {
			t.Errorf("%s: approvedCSR passed: %s", name, r)
		}
	}
	if r := approvedCSR(good, "abc", "n"); !r.ok || !strings.Contains(r.what, "csr-4") {
		t.Errorf("approvedCSR(good) = %s", r)
	}
	if r := deniedCSR(good, "abc"); r.ok || !strings.Contains(r.fix, "certificate deny") {
		t.Errorf("deniedCSR without a denied CSR = %s", r)
	}
	if r := deniedCSR(denied, "abc"); !r.ok || !strings.Contains(r.what, "system:node:x") {
		t.Errorf("deniedCSR(denied) = %s", r)
	}
}

// Lab 02: the current certificate is a symlink to a dated file with mode 0600.
func TestClientCertFiles(t *testing.T) {
	dir := t.TempDir()
	if r := clientCertFiles(dir); r.ok || !strings.Contains(r.what, "no client certificate") {
		t.Errorf("empty dir: %s", r)
	}
	dated := filepath.Join(dir, "kubelet-client-2026-01-01-00-00-00.pem")
	if err := os.WriteFile(dated, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(dated), filepath.Join(dir, "kubelet-client-current.pem")); err != nil {
		t.Fatal(err)
	}
	if r := clientCertFiles(dir); r.ok || !strings.Contains(r.what, "mode 0644") {
		t.Errorf("mode 0644: %s", r)
	}
	if err := os.Chmod(dated, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := clientCertFiles(dir); !r.ok {
		t.Errorf("good files: %s", r)
	}
}

// Lab 03: the Lease is fresh within its own duration; the heartbeat within the report frequency.
func TestLeaseAndHeartbeat(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := func(age time.Duration, seconds int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: coordinationv1.LeaseSpec{
			RenewTime: &metav1.MicroTime{Time: now.Add(-age)}, LeaseDurationSeconds: ptr.To(seconds), HolderIdentity: ptr.To("n")}}
	}
	if r := leaseFresh(lease(5*time.Second, 40), now); !r.ok {
		t.Errorf("5 s old, 40 s lease: %s", r)
	}
	if r := leaseFresh(lease(15*time.Second, 12), now); r.ok || !strings.Contains(r.fix, "kill -CONT") {
		t.Errorf("15 s old, 12 s lease: %s", r)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(now.Add(-10 * time.Minute))}}}}
	if r := readyHeartbeat(node, now); r.ok {
		t.Errorf("10 min old heartbeat passed: %s", r)
	}
	node.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(now.Add(-time.Minute))
	if r := readyHeartbeat(node, now); !r.ok {
		t.Errorf("1 min old heartbeat: %s", r)
	}
	l := lease(0, 40)
	if r := leaseHeld(l, node); r.ok || !strings.Contains(r.what, "no owner reference") {
		t.Errorf("lease without owner: %s", r)
	}
	l.OwnerReferences = []metav1.OwnerReference{{Kind: "Node", Name: "n", UID: "u1"}}
	if r := leaseHeld(l, node); !r.ok {
		t.Errorf("owned lease: %s", r)
	}
}

// Lab 03: NodeNotReady must be followed by NodeReady; the order is by time, not by list order.
func TestNotReadyRoundTrip(t *testing.T) {
	at := func(reason string, min int) corev1.Event {
		return corev1.Event{Reason: reason, LastTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 12, min, 0, 0, time.UTC))}
	}
	tests := []struct {
		name   string
		events []corev1.Event
		ok     bool
	}{
		{"only the first NodeReady", []corev1.Event{at("NodeReady", 1)}, false},
		{"NotReady, not back", []corev1.Event{at("NodeReady", 1), at("NodeNotReady", 2)}, false},
		{"round trip, listed out of order", []corev1.Event{at("NodeReady", 3), at("NodeNotReady", 2), at("Starting", 1)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := notReadyRoundTrip(tc.events); r.ok != tc.ok {
				t.Errorf("got %s, want ok=%v", r, tc.ok)
			}
		})
	}
}

// Lab 04: a restart is not enough; the last exit must be the injected kill.
func TestKilledAndRestarted(t *testing.T) {
	pod := running("lab04-kill", "n")
	if r := killedAndRestarted(pod); r.ok {
		t.Errorf("never restarted: %s", r)
	}
	pod.Status.ContainerStatuses[0].RestartCount = 1
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 143}
	if r := killedAndRestarted(pod); r.ok {
		t.Errorf("restarted after a stop, not a kill: %s", r)
	}
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 42, Message: "killed by fault injection"}
	if r := killedAndRestarted(pod); !r.ok {
		t.Errorf("killed with --exit-code 42: %s", r)
	}
}

// Lab 04: the old sandbox stays NOTREADY, exactly one new one is READY, and the API shows its IP.
func TestSandboxReplaced(t *testing.T) {
	pod := running("lab04-sandbox", "n")
	old := fakeSandbox{ID: "old", State: "SANDBOX_NOTREADY", IP: "127.88.0.8"}
	cur := fakeSandbox{ID: "new", State: "SANDBOX_READY", IP: "127.88.0.9"}
	tests := []struct {
		name      string
		sandboxes []fakeSandbox
		ok        bool
	}{
		{"never flipped", []fakeSandbox{cur}, false},
		{"not replaced yet", []fakeSandbox{old}, false},
		{"replaced", []fakeSandbox{old, cur}, true},
		{"API shows the old IP", []fakeSandbox{old, {ID: "new", State: "SANDBOX_READY", IP: "127.88.0.10"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := sandboxReplaced(pod, tc.sandboxes); r.ok != tc.ok {
				t.Errorf("got %s, want ok=%v", r, tc.ok)
			}
		})
	}
}

// Lab 05: CrashLoopBackOff needs restartPolicy Always, a restart, exit code 1 and the waiting reason.
func TestCrashLoopingAndFailed(t *testing.T) {
	crash := running("lab05-crash", "n")
	cs := &crash.Status.ContainerStatuses[0]
	if r := crashLooping("default/lab05-crash", crash, "n"); r.ok {
		t.Errorf("running, never restarted: %s", r)
	}
	cs.RestartCount = 2
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	if r := crashLooping("default/lab05-crash", crash, "n"); r.ok || !strings.Contains(r.what, "terminated: Error") {
		t.Errorf("between back-offs: %s", r)
	}
	cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s"}}
	if r := crashLooping("default/lab05-crash", crash, "n"); !r.ok {
		t.Errorf("in CrashLoopBackOff: %s", r)
	}
	crash.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	if r := crashLooping("default/lab05-crash", crash, "n"); r.ok {
		t.Errorf("restartPolicy OnFailure passed: %s", r)
	}

	once := running("lab05-once", "n")
	once.Spec.RestartPolicy = corev1.RestartPolicyNever
	if r := endedFailed("default/lab05-once", once, "n"); r.ok {
		t.Errorf("still running: %s", r)
	}
	once.Status.Phase = corev1.PodFailed
	once.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	if r := endedFailed("default/lab05-once", once, "n"); !r.ok {
		t.Errorf("Failed: %s", r)
	}
	ready := fakeSandbox{ID: "s1", Name: "lab05-once", Namespace: "default", State: "SANDBOX_READY"}
	if r := sandboxStopped(once, []fakeSandbox{ready}, nil); r.ok {
		t.Errorf("READY sandbox passed: %s", r)
	}
	ready.State = "SANDBOX_NOTREADY"
	if r := sandboxStopped(once, []fakeSandbox{ready}, []fakeContainer{{ID: "c1", SandboxID: "s1", State: "CONTAINER_EXITED"}}); !r.ok {
		t.Errorf("stopped sandbox: %s", r)
	}
}

// Lab 06: "gone" only counts for a pod that existed, and the status must be minikubelet's.
func TestStatusManagerChecks(t *testing.T) {
	when := metav1.Now()
	if r := podDeleted("default/d", nil, "", when); r.ok || !strings.Contains(r.fix, "create it, then delete it") {
		t.Errorf("never created: %s", r)
	}
	if r := podDeleted("default/d", running("d", "n"), "u", when); r.ok || !strings.Contains(r.fix, "kubectl delete pod d") {
		t.Errorf("not deleted: %s", r)
	}
	if r := podDeleted("default/d", nil, "u", when); !r.ok {
		t.Errorf("deleted: %s", r)
	}
	pod := running("s", "n")
	if r := statusByKubelet(pod); r.ok {
		t.Errorf("no managed fields: %s", r)
	}
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "minikubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &when}}
	if r := statusByKubelet(pod); !r.ok {
		t.Errorf("status by minikubelet: %s", r)
	}
}

// Lab 07: the metric is read from Prometheus text, and zero requests for secrets is missing.
func TestObjectRequests(t *testing.T) {
	text := `# HELP kubelet_object_manager_api_requests_total API requests sent by the secret and configmap managers.
# TYPE kubelet_object_manager_api_requests_total counter
kubelet_object_manager_api_requests_total{kind="configmaps",verb="watch"} 2
kubelet_object_manager_api_requests_total{kind="secrets",verb="get"} 35
kubelet_pod_workers 5
`
	counts := parseObjectRequests(text)
	if counts["secrets"]["get"] != 35 || counts["configmaps"]["watch"] != 2 || len(counts) != 2 {
		t.Fatalf("parsed %v", counts)
	}
	if r := objectRequests(counts); !r.ok || !strings.Contains(r.what, "secrets get=35, configmaps watch=2") {
		t.Errorf("got %s", r)
	}
	if r := objectRequests(parseObjectRequests("kubelet_pod_workers 5\n")); r.ok {
		t.Errorf("no requests passed: %s", r)
	}
	if r := fileShows(execResult{stdout: "s3cret"}, "/etc/secret/password", "n3w", "wait"); r.ok || r.fix != "wait" {
		t.Errorf("stale file passed: %s", r)
	}
}

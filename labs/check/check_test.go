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
		"0": "00-one-pods-life", "00": "00-one-pods-life",
		"4": "04-pleg", "04": "04-pleg", "04-pleg": "04-pleg", "labs/04-pleg/": "04-pleg", "8": "08-kubectl-exec",
		"9": "09-probes-and-init-containers", "10": "10-resource-management", "11": "", "": "", "pleg": "",
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

// lab09Event is an Event about pod from the kubelet (or another source), first seen at first.
func lab09Event(source, reason, message string, first time.Time) corev1.Event {
	return corev1.Event{Source: corev1.EventSource{Component: source}, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: metav1.NewTime(first), LastTimestamp: metav1.NewTime(first)}
}

// Lab 09: a restart alone is not enough; the kubelet must have said it was the liveness probe.
func TestLivenessRestarted(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := running("lab09-liveness", "n")
	unhealthy := lab09Event("kubelet", "Unhealthy", "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory", now)
	killing := lab09Event("kubelet", "Killing", "Container liveness failed liveness probe, will be restarted", now)
	if r := livenessRestarted("default/lab09-liveness", nil, "n", nil); r.ok || !strings.Contains(r.fix, "liveness.yaml") {
		t.Errorf("no pod: %s", r)
	}
	if r := livenessRestarted("default/lab09-liveness", pod, "n", []corev1.Event{unhealthy, killing}); r.ok || !strings.Contains(r.fix, "45 s") {
		t.Errorf("never restarted: %s", r)
	}
	pod.Status.ContainerStatuses[0].RestartCount = 1
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 143, Reason: "Error"}
	tests := []struct {
		name   string
		events []corev1.Event
		ok     bool
	}{
		{"restarted, no Events", nil, false},
		{"the Unhealthy Event is not the kubelet's", []corev1.Event{lab09Event("someone", "Unhealthy", unhealthy.Message, now), killing}, false},
		{"no Killing yet", []corev1.Event{unhealthy}, false},
		{"Unhealthy and Killing", []corev1.Event{killing, unhealthy}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if r := livenessRestarted("default/lab09-liveness", pod, "n", tc.events); r.ok != tc.ok {
				t.Errorf("got %s, want ok=%v", r, tc.ok)
			}
		})
	}
}

// Lab 09: readiness must have failed (404: the file removed) and come back, with no restart.
func TestReadinessFlipped(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	failed := lab09Event("kubelet", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 404", now)
	refused := lab09Event("kubelet", "Unhealthy", "Readiness probe failed: Get \"http://127.88.0.3:8080/ready\": connection refused", now)
	pod := func(ready corev1.ConditionStatus, since time.Time, restarts int32) *corev1.Pod {
		p := running("lab09-ready", "n")
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.NewTime(since)}}
		p.Status.ContainerStatuses[0].RestartCount = restarts
		return p
	}
	tests := []struct {
		name   string
		pod    *corev1.Pod
		events []corev1.Event
		ok     bool
		says   string
	}{
		{"never failed", pod(corev1.ConditionTrue, now.Add(-time.Minute), 0), nil, false, "rm /www/ready"},
		{"failed only before the server listened", pod(corev1.ConditionTrue, now.Add(time.Second), 0), []corev1.Event{refused}, false, "rm /www/ready"},
		{"not Ready now", pod(corev1.ConditionFalse, now.Add(6*time.Second), 0), []corev1.Event{failed}, false, "touch /www/ready"},
		{"Ready since before the failure", pod(corev1.ConditionTrue, now.Add(-time.Minute), 0), []corev1.Event{failed}, false, "gone False and back"},
		{"restarted", pod(corev1.ConditionTrue, now.Add(10*time.Second), 1), []corev1.Event{failed}, false, "never restarts"},
		{"both ways", pod(corev1.ConditionTrue, now.Add(10*time.Second), 0), []corev1.Event{failed}, true, "Ready again"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := readinessFlipped("default/lab09-ready", tc.pod, "n", tc.events)
			if r.ok != tc.ok || !strings.Contains(r.String(), tc.says) {
				t.Errorf("got %q, want ok=%v containing %q", r, tc.ok, tc.says)
			}
		})
	}
}

// Lab 09: init containers one after the other, the app after the last; a failing one crash-loops
// under Always and fails the pod under Never; a sidecar starts before the app and stops after it.
func TestInitContainersAndSidecar(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 12, 0, s, 0, time.UTC)) }
	done := func(name string, start, end int, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, ContainerID: "minikubelet-fake://" + name, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: at(start), FinishedAt: at(end)}}}
	}
	initPod := running("lab09-init", "n")
	initPod.Spec.InitContainers = []corev1.Container{{Name: "fetch"}, {Name: "migrate"}}
	initPod.Status.Conditions = append(initPod.Status.Conditions, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue})
	initPod.Status.ContainerStatuses[0].State.Running.StartedAt = at(17)
	initPod.Status.InitContainerStatuses = []corev1.ContainerStatus{done("fetch", 0, 8, 0), done("migrate", 4, 16, 0)}
	if r := initInOrder("default/lab09-init", initPod, "n"); r.ok || !strings.Contains(r.what, "before fetch ended") {
		t.Errorf("overlapping init containers: %s", r)
	}
	initPod.Status.InitContainerStatuses[1] = done("migrate", 8, 16, 0)
	if r := initInOrder("default/lab09-init", initPod, "n"); !r.ok {
		t.Errorf("in order: %s", r)
	}
	initPod.Status.InitContainerStatuses[1] = done("migrate", 8, 16, 1)
	if r := initInOrder("default/lab09-init", initPod, "n"); r.ok {
		t.Errorf("migrate failed: %s", r)
	}

	crash := running("lab09-init-crash", "n")
	crash.Spec.InitContainers = []corev1.Container{{Name: "check-db"}}
	crash.Status.Phase = corev1.PodPending
	crash.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	crash.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "check-db", RestartCount: 2,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}},
		State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	if r := initCrashLooping("default/lab09-init-crash", crash, "n"); r.ok {
		t.Errorf("between back-offs (Init:Error): %s", r)
	}
	crash.Status.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if r := initCrashLooping("default/lab09-init-crash", crash, "n"); !r.ok {
		t.Errorf("Init:CrashLoopBackOff: %s", r)
	}
	crash.Status.ContainerStatuses[0] = done("app", 1, 2, 0)
	if r := initCrashLooping("default/lab09-init-crash", crash, "n"); r.ok {
		t.Errorf("the app ran: %s", r)
	}

	never := running("lab09-init-never", "n")
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	never.Spec.InitContainers = []corev1.Container{{Name: "check-db"}}
	never.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	never.Status.InitContainerStatuses = []corev1.ContainerStatus{done("check-db", 0, 0, 1)}
	if r := initFailed("default/lab09-init-never", never, "n"); r.ok {
		t.Errorf("still Running: %s", r)
	}
	never.Status.Phase = corev1.PodFailed
	if r := initFailed("default/lab09-init-never", never, "n"); !r.ok {
		t.Errorf("Failed: %s", r)
	}

	sidecar := running("lab09-sidecar", "n")
	sidecar.Spec.RestartPolicy = corev1.RestartPolicyNever
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
	sidecar.Spec.Containers = []corev1.Container{{Name: "job"}}
	sidecar.Status.Phase = corev1.PodSucceeded
	sidecar.Status.ContainerStatuses[0] = done("job", 2, 12, 0)
	sidecar.Status.InitContainerStatuses = []corev1.ContainerStatus{done("proxy", 0, 11, 143)}
	if r := sidecarStoppedAfterApp("default/lab09-sidecar", sidecar, "n"); r.ok || !strings.Contains(r.fix, "termination_order.go") {
		t.Errorf("sidecar stopped before the app: %s", r)
	}
	sidecar.Status.InitContainerStatuses[0] = done("proxy", 0, 12, 143)
	if r := sidecarStoppedAfterApp("default/lab09-sidecar", sidecar, "n"); !r.ok {
		t.Errorf("sidecar stopped after the app: %s", r)
	}
	sidecar.Spec.InitContainers[0].RestartPolicy = nil
	if r := sidecarStoppedAfterApp("default/lab09-sidecar", sidecar, "n"); r.ok {
		t.Errorf("no sidecar: %s", r)
	}
}

// Package journal tests the kubelet's journal ("what just happened?") end to end: one real pod's
// life as the syncLoop, pod workers, CRI, PLEG and status manager record it, read from the
// loopback debug address, from `minikubelet journal`, from :10250 (authenticated) and rendered by
// /debug/journal/ui in headless Chromium.
package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/internal/journal"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

var (
	cluster     *framework.Cluster
	minikubelet string
)

func TestMain(m *testing.M) {
	os.Exit(framework.MainWithMinikubelet(m.Run, framework.Options{}, &cluster, &minikubelet))
}

// node is a running minikubelet with its kubelet API and its loopback debug address.
type node struct {
	name      string
	rootDir   string
	port      int // kubelet API, on 127.0.0.1
	debugAddr string
}

// startNode runs minikubelet as node name with --debug-address on a free loopback port, and
// waits until the node is Ready.
func startNode(t *testing.T, name string) *node {
	t.Helper()
	rootDir, err := os.MkdirTemp("", "mkj") // short: the fake runtime's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rootDir) })
	n := &node{name: name, rootDir: rootDir, port: framework.FreePort(t), debugAddr: "127.0.0.1:" + strconv.Itoa(framework.FreePort(t))}
	framework.StartProcess(t, minikubelet,
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(n.port), "--debug-address", n.debugAddr)
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	framework.Eventually(t, time.Minute, "node "+name+" Ready", func() (bool, string) {
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
	return n
}

func namespace(t *testing.T) string {
	t.Helper()
	ns, err := cluster.Client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-journal-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// runPod creates a pod that sleeps on node, and waits until it is Running and Ready.
func runPod(t *testing.T, ns, name, node string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: node},
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, name+" Running", func() (bool, string) {
		pod, err = cluster.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return pod.Status.Phase == corev1.PodRunning, string(pod.Status.Phase)
			}
		}
		return false, string(pod.Status.Phase) + ", not Ready"
	})
	return pod
}

// step is one link of the chain a pod's life must show, in this order.
type step struct {
	source, kind string
	fields       map[string]string // fields the event must carry, if any
}

func (s step) String() string { return s.source + " " + s.kind }

func (s step) matches(e journal.Event) bool {
	if e.Source != s.source || e.Kind != s.kind {
		return false
	}
	for k, v := range s.fields {
		if e.Fields[k] != v {
			return false
		}
	}
	return true
}

// podLife is the ordered chain of one pod created, Running, then deleted with kubectl delete
// (a graceful deletion: the API server sets deletionTimestamp, so the kubelet's pod source sends
// DELETE; REMOVE follows once the status manager's final delete removed the object).
var podLife = []step{
	{journal.SourceSyncLoop, "configCh ADD", nil},
	{journal.SourcePodWorker, "syncing", nil},
	{journal.SourceCRI, "RunPodSandbox", nil},
	{journal.SourceCRI, "CreateContainer", map[string]string{"container": "app"}},
	{journal.SourceCRI, "StartContainer", map[string]string{"container": "app"}},
	{journal.SourcePLEG, "ContainerStarted", nil},
	{journal.SourceStatus, "PATCH", map[string]string{"phase": "Running", "code": "200"}},
	{journal.SourceSyncLoop, "configCh DELETE", nil},
	{journal.SourcePodWorker, "terminating", nil},
	{journal.SourcePodWorker, "terminated", nil},
	{journal.SourceStatus, "delete", nil},
}

// findChain returns how many steps of chain appear in events in order (as a subsequence).
func findChain(events []journal.Event, chain []step) int {
	i := 0
	for _, e := range events {
		if i < len(chain) && chain[i].matches(e) {
			i++
		}
	}
	return i
}

func describeEvents(events []journal.Event) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.Text(time.UTC))
		b.WriteString("\n")
	}
	return b.String()
}

// One pod's life, as the kubelet's components record it, in order: the syncLoop hears of it,
// its worker syncs it, kuberuntime makes the CRI calls, PLEG sees the container start, the status
// manager PATCHes Running; then kubectl delete: DELETE, terminating, terminated, and the status
// manager's final delete. The same journal is on :10250 behind authentication (nodes/proxy),
// printed by `minikubelet journal`, and drawn by /debug/journal/ui.
func TestPodLifeInTheJournal(t *testing.T) {
	n := startNode(t, "e2e-journal")
	ns := namespace(t)
	ctx := context.Background()
	debug := journal.Client{BaseURL: "http://" + n.debugAddr}

	pod := runPod(t, ns, "web", n.name)
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "web deleted from the API server", func() (bool, string) {
		_, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	podKey := ns + "/web"
	var events []journal.Event
	framework.Eventually(t, 30*time.Second, "the whole life of "+podKey+" in the journal", func() (bool, string) {
		page, err := debug.Read(ctx, 0, journal.Filter{Pod: podKey}, 0)
		if err != nil {
			return false, err.Error()
		}
		events = page.Events
		found := findChain(events, podLife)
		if found == len(podLife) {
			return true, ""
		}
		return false, fmt.Sprintf("found %d of %d steps; missing %q after them; journal:\n%s", found, len(podLife), podLife[found], describeEvents(events))
	})
	// Housekeeping then removes the finished worker: its goroutine ends.
	workerEnd := []step{{journal.SourcePodWorker, "terminated", nil}, {journal.SourcePodWorker, "worker done", nil}}
	framework.Eventually(t, 30*time.Second, "the worker of "+podKey+" done", func() (bool, string) {
		page, err := debug.Read(ctx, 0, journal.Filter{Pod: podKey}, 0)
		if err != nil {
			return false, err.Error()
		}
		events = page.Events
		return findChain(events, workerEnd) == len(workerEnd), describeEvents(events)
	})
	for _, e := range events {
		if e.UID != string(pod.UID) {
			t.Errorf("event %q names UID %s, want the pod's %s", e.Text(time.UTC), e.UID, pod.UID)
		}
	}
	t.Logf("journal of %s (%d events):\n%s", podKey, len(events), describeEvents(events))

	t.Run("minikubelet journal prints it", func(t *testing.T) {
		code, out := framework.RunToExit(t, time.Minute, minikubelet, "journal", "--pod", podKey, "--address", n.debugAddr)
		// The pod's life as read above, then whatever came since (REMOVE, worker done…).
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) < len(events)+1 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "SEQ TIME") {
			t.Fatalf("minikubelet journal: exit %d, %d lines, want a header and at least %d events:\n%s", code, len(lines), len(events), out)
		}
		for i, e := range events {
			if want := e.Text(time.Local); lines[i+1] != want {
				t.Errorf("line %d = %q, want %q", i+1, lines[i+1], want)
			}
		}
		t.Logf("minikubelet journal --pod %s:\n%s", podKey, out)
	})

	t.Run("minikubelet journal --follow prints new events", func(t *testing.T) {
		follow := framework.StartProcess(t, minikubelet, "journal", "--follow", "--pod", ns+"/second", "--address", n.debugAddr)
		framework.Eventually(t, 30*time.Second, "the header of journal --follow", func() (bool, string) {
			return strings.Contains(follow.Log(), "SEQ TIME"), follow.Log()
		})
		runPod(t, ns, "second", n.name)
		framework.Eventually(t, 30*time.Second, "journal --follow printing the second pod's StartContainer", func() (bool, string) {
			out := follow.Log()
			return strings.Contains(out, ns+"/second") && strings.Contains(out, "StartContainer"), out
		})
		if follow.Exited() {
			t.Errorf("journal --follow exited; log:\n%s", follow.Log())
		}
	})

	t.Run(":10250/debug/journal needs authentication", func(t *testing.T) {
		api, err := framework.SelfSignedKubeletAPI(n.rootDir, n.port)
		if err != nil {
			t.Fatal(err)
		}
		if code, body := api.Get(t, journal.Path); code != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %d %q, want 401", journal.Path, code, body)
		}
		if code, _ := api.Get(t, journal.UIPath); code != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %d, want 401", journal.UIPath, code)
		}
		adminCert, err := cluster.AdminCert()
		if err != nil {
			t.Fatal(err)
		}
		code, body := api.Get(t, journal.Path+"?pod="+podKey, adminCert)
		var page journal.Page
		if err := json.Unmarshal([]byte(body), &page); code != http.StatusOK || err != nil || findChain(page.Events, podLife) != len(podLife) {
			t.Errorf("GET %s as the cluster admin (nodes/proxy): %d, %v, %.300s; want 200 and the pod's life", journal.Path, code, err, body)
		}
	})

	t.Run("the page draws the pod's timeline", func(t *testing.T) {
		chromium := findChromium(t)
		url := "http://" + n.debugAddr + journal.UIPath
		dom := runChromium(t, chromium, url, "--dump-dom")
		for _, want := range []string{`data-pod="` + podKey + `"`, "StartContainer", "configCh ADD", "terminated", "last seq"} {
			if !strings.Contains(dom, want) {
				t.Errorf("rendered page lacks %q; DOM:\n%s", want, dom)
			}
		}
		screenshot := filepath.Join(framework.RepoRoot(), "_output", "journal-ui.png")
		if err := os.MkdirAll(filepath.Dir(screenshot), 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(screenshot)
		runChromium(t, chromium, url, "--screenshot="+screenshot, "--window-size=1280,800")
		if st, err := os.Stat(screenshot); err != nil || st.Size() < 10_000 {
			t.Fatalf("screenshot %s: %v (size %v), want a PNG of the page", screenshot, err, st)
		}
		t.Logf("screenshot of %s: %s", url, screenshot)
	})
}

// findChromium returns Debian's chromium, installed by hack/tools/install.sh chromium if missing
// (CI runs as root). Elsewhere, without it, the page test is skipped with how to install it.
func findChromium(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(framework.RepoRoot(), "hack", "tools", "install.sh"), "chromium")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("hack/tools/install.sh chromium: %v\n%s", err, stderr.String())
		}
		t.Skipf("no chromium (hack/tools/install.sh chromium: %v): %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// runChromium runs headless Chromium on url with extra flags (--dump-dom, --screenshot=…) and
// returns what it printed on stdout. It gives the page's JavaScript 5 s of virtual time to poll
// the journal. Chromium runs in its own process group; the group is killed by its ID when the
// run fails or takes over a minute, and after it ends (its helpers must not outlive it).
func runChromium(t *testing.T, bin, url string, extra ...string) string {
	t.Helper()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000",
	}, extra...)
	cmd := exec.Command(bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	pid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		killGroup()
		if err != nil {
			t.Fatalf("chromium (PID %d) %s: %v\nstderr:\n%s", pid, strings.Join(extra, " "), err, stderr.String())
		}
	case <-time.After(time.Minute):
		killGroup()
		<-done
		t.Fatalf("chromium (PID %d) %s did not finish within a minute; killed its process group\nstderr:\n%s", pid, strings.Join(extra, " "), stderr.String())
	}
	return stdout.String()
}

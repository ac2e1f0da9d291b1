package containerd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// busyboxImage is built and imported by hack/containerd/images.sh; no registry has it.
const busyboxImage = "docker.io/minikubelet/busybox:local"

// daemon is a private containerd started by hack/containerd/up.sh.
type daemon struct {
	stateDir string
	endpoint string   // unix://<stateDir>/containerd.sock
	upArgs   []string // more flags of up.sh up, e.g. --csi-hostpath
}

// startContainerd starts a containerd of the test's own (in a short temporary directory: the
// socket path must fit in 107 bytes). It is stopped — containers, shims, mounts and all — when
// the test ends, and by up.sh's watchdog if this test binary dies first. upArgs are more flags
// of up.sh up (--csi-hostpath: our CSI driver's image too).
func startContainerd(t *testing.T, upArgs ...string) *daemon {
	t.Helper()
	requireContainerd(t)
	dir, err := os.MkdirTemp("", "mkc")
	if err != nil {
		t.Fatal(err)
	}
	r := &daemon{stateDir: dir, endpoint: "unix://" + filepath.Join(dir, "containerd.sock"), upArgs: upArgs}
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
			t.Logf("--- the end of containerd.log:\n%s", tail(string(log), 40))
		}
		if out, err := r.upSh("down"); err != nil {
			t.Errorf("hack/containerd/up.sh down: %v\n%s", err, out)
		}
	})
	r.start(t)
	return r
}

func (r *daemon) upSh(verb string) (string, error) {
	up := filepath.Join(framework.RepoRoot(), "hack", "containerd", "up.sh")
	args := []string{up, verb, "--state-dir", r.stateDir, "--exit-with", strconv.Itoa(os.Getpid())}
	if verb == "up" {
		args = append(args, r.upArgs...)
	}
	out, err := exec.Command("bash", args...).CombinedOutput()
	return string(out), err
}

// start runs up.sh up: a new containerd, or the same state again after stop.
func (r *daemon) start(t *testing.T) {
	t.Helper()
	out, err := r.upSh("up")
	if err != nil {
		t.Fatalf("hack/containerd/up.sh up: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(out))
}

// stop ends the containerd daemon alone, by its recorded PID, as `systemctl stop containerd`
// would: its shims keep the containers running, so a started containerd finds them again.
func (r *daemon) stop(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.stateDir, "containerd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM containerd (PID %d): %v", pid, err)
	}
	// Not our child (up.sh started it in its own session), so watch /proc rather than wait.
	framework.Eventually(t, 30*time.Second, "containerd to exit", func() (bool, string) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return errors.Is(err, os.ErrNotExist), fmt.Sprintf("PID %d still there", pid)
	})
}

// crictl runs crictl against the runtime and returns its stdout.
func (r *daemon) crictl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, crictl, append([]string{"--runtime-endpoint", r.endpoint, "--image-endpoint", r.endpoint}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("crictl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// criPod is what `crictl pods -o json` says of one sandbox.
type criPod struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// criContainer is what `crictl ps -o json` says of one container.
type criContainer struct {
	ID           string `json:"id"`
	PodSandboxID string `json:"podSandboxId"`
	State        string `json:"state"`
	Metadata     struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// pods lists the runtime's sandboxes of Kubernetes namespace ns.
func (r *daemon) pods(t *testing.T, ns string) []criPod {
	t.Helper()
	var list struct{ Items []criPod }
	if err := json.Unmarshal([]byte(r.crictl(t, "pods", "--namespace", ns, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// containers lists every container (running or not) of the given sandboxes.
func (r *daemon) containers(t *testing.T, sandboxes []criPod) []criContainer {
	t.Helper()
	var all []criContainer
	for _, s := range sandboxes {
		var list struct{ Containers []criContainer }
		if err := json.Unmarshal([]byte(r.crictl(t, "ps", "-a", "--pod", s.ID, "-o", "json")), &list); err != nil {
			t.Fatal(err)
		}
		all = append(all, list.Containers...)
	}
	return all
}

// node is a minikubelet joined to the cluster, running its pods in a containerd.
type node struct {
	name    string
	rootDir string
	port    int // its kubelet API, on 127.0.0.1
	proc    *framework.Process
}

// startNode runs minikubelet as node name with --container-runtime-endpoint (and extra flags),
// and waits until the node is Ready.
func startNode(t *testing.T, name string, rt *daemon, extra ...string) *node {
	t.Helper()
	rootDir := t.TempDir()
	n := &node{name: name, rootDir: rootDir, port: framework.FreePort(t)}
	n.proc = framework.StartProcess(t, minikubelet, append([]string{
		"--bootstrap-kubeconfig", cluster.BootstrapKubeconfig, "--root-dir", rootDir,
		"--hostname-override", name, "--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(n.port),
		"--container-runtime-endpoint", rt.endpoint, "-v", "2"}, extra...)...)
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	waitNodeReady(t, name, corev1.ConditionTrue, "")
	return n
}

// waitNodeReady waits until the node's Ready condition has status, and its message contains
// message; it returns the condition.
func waitNodeReady(t *testing.T, name string, status corev1.ConditionStatus, message string) corev1.NodeCondition {
	t.Helper()
	var ready corev1.NodeCondition
	framework.Eventually(t, 2*time.Minute, fmt.Sprintf("node %s Ready=%s", name, status), func() (bool, string) {
		n, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c
				return c.Status == status && strings.Contains(c.Message, message), c.Reason + ": " + c.Message
			}
		}
		return false, "no Ready condition"
	})
	return ready
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-containerd-"}}
	ns, err := cluster.Client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// busyboxPod is a host-network pod of our busybox image on the node. The image is local, so it
// must never be pulled: IfNotPresent (the default for a tag other than :latest, spelt out here).
func busyboxPod(nodeName string, policy corev1.RestartPolicy, command ...string) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelHostname: nodeName},
		HostNetwork:                   true,
		RestartPolicy:                 policy,
		AutomountServiceAccountToken:  ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](5),
		Containers: []corev1.Container{{
			Name: "app", Image: busyboxImage, ImagePullPolicy: corev1.PullIfNotPresent, Command: command,
		}},
	}
}

func createPod(t *testing.T, ns, name string, spec corev1.PodSpec) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	pod, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// runningPod creates a pod and waits until it is Running and Ready.
func runningPod(t *testing.T, ns, name string, spec corev1.PodSpec) *corev1.Pod {
	t.Helper()
	createPod(t, ns, name, spec)
	var pod *corev1.Pod
	framework.Eventually(t, 2*time.Minute, name+" Running", func() (bool, string) {
		pod = getPod(t, ns, name)
		return pod.Status.Phase == corev1.PodRunning && isReady(pod), describe(pod)
	})
	return pod
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func describe(pod *corev1.Pod) string {
	data, _ := json.Marshal(pod.Status)
	return pod.Name + " " + string(pod.Status.Phase) + " " + string(data)
}

// kubectl runs the cluster's kubectl as the admin, and returns its output and exit code.
func kubectl(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cluster.Kubectl, append([]string{"--kubeconfig", cluster.AdminKubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return string(out), exitErr.ExitCode()
	}
	if err != nil {
		t.Fatalf("kubectl %v: %v", args, err)
	}
	return string(out), 0
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

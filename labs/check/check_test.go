package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

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
		"9": "09-probes-and-init-containers", "10": "10-resource-management", "11": "11-kubeadm-cluster", "12": "12-volume-manager", "012": "", "13": "", "99": "", "": "", "pleg": "",
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
	if len(lines) != 7 || !strings.HasPrefix(lines[1], "[MISSING] no admin kubeconfig") || !strings.Contains(lines[1], "make run") ||
		!strings.Contains(lines[2], "not checked") || !strings.Contains(lines[6], "5 of 5 checks are missing") {
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

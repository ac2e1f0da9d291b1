package containerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// hostCgroupFile reads file of the container's cgroup on the host: under the memory or cpu
// hierarchy on cgroup v1, in the unified one on v2. The path is the pod's cgroup parent
// (/kubepods/<qos>/pod<uid>, upstream's cgroupfs naming) and the container's ID, as containerd
// joins them for runc.
func hostCgroupFile(t *testing.T, controller, parent, containerID, v1File, v2File string) string {
	t.Helper()
	v2 := filepath.Join("/sys/fs/cgroup", parent, containerID, v2File)
	if data, err := os.ReadFile(v2); err == nil {
		return strings.TrimSpace(string(data))
	}
	v1 := filepath.Join("/sys/fs/cgroup", controller, parent, containerID, v1File)
	data, err := os.ReadFile(v1)
	if err != nil {
		t.Fatalf("the container's cgroup is in neither %s nor %s: %v", v2, v1, err)
	}
	return strings.TrimSpace(string(data))
}

// A Burstable pod's requests and limits reach runc through CRI (upstream
// generateLinuxContainerResources): its container's cgroup is below
// /kubepods/burstable/pod<uid>, with the memory limit (seen inside the container too), the
// CFS quota of its cpu limit, and the oom_score_adj of its QoS class; a container that
// allocates more than its memory limit is OOM-killed, and its status says OOMKilled; the pod
// cgroup goes once the pod is deleted. /stats/summary shows the running container's real usage.
func TestResourcesReachTheCgroup(t *testing.T) {
	rt := startContainerd(t)
	n := startNode(t, "e2e-containerd-resources", rt)
	ns := namespace(t)

	limited := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	limited.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	pod := runningPod(t, ns, "limited", limited)
	if pod.Status.QOSClass != corev1.PodQOSBurstable {
		t.Fatalf("qosClass %s, want Burstable", pod.Status.QOSClass)
	}
	containerID := strings.TrimPrefix(pod.Status.ContainerStatuses[0].ContainerID, "containerd://")
	parent := "/kubepods/burstable/pod" + string(pod.UID)

	if got := hostCgroupFile(t, "memory", parent, containerID, "memory.limit_in_bytes", "memory.max"); got != "67108864" {
		t.Errorf("memory limit of the container's cgroup = %s, want 67108864 (64Mi)", got)
	}
	if got := hostCgroupFile(t, "cpu", parent, containerID, "cpu.cfs_quota_us", "cpu.max"); got != "50000" && got != "50000 100000" {
		t.Errorf("cpu quota of the container's cgroup = %q, want 50000 per 100000 µs (500m)", got)
	}
	inside, code := kubectl(t, "-n", ns, "exec", "limited", "--", "sh", "-c",
		"cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; cat /proc/1/oom_score_adj")
	lines := strings.Fields(inside)
	if code != 0 || len(lines) != 2 || lines[0] != "67108864" {
		t.Errorf("inside the container: exit %d, %q; want the memory limit 67108864 and oom_score_adj", code, inside)
	}
	node, err := cluster.Client.CoreV1().Nodes().Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Burstable: 1000 - 1000 × request / capacity (upstream GetContainerOOMScoreAdjust), here
	// at most 999; containerd (restrict_oom_score_adj) keeps it as it is above its own.
	want := 1000 - 1000*(32<<20)/node.Status.Capacity.Memory().Value()
	if want == 1000 {
		want = 999
	}
	if len(lines) == 2 && lines[1] != fmt.Sprint(want) {
		t.Errorf("oom_score_adj = %s, want %d", lines[1], want)
	}

	expectContainerStats(t, n, ns, "limited")

	// dd's 256Mi buffer is written by each read of /dev/zero: far over 64Mi.
	hog := busyboxPod(n.name, corev1.RestartPolicyNever, "dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=4")
	hog.Containers[0].Resources = corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("64Mi")},
	}
	createPod(t, ns, "hog", hog)
	term := terminatedState(t, ns, "hog")
	if term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Errorf("hog terminated %+v, want reason OOMKilled, exit code 137", term)
	}
	framework.Eventually(t, time.Minute, "hog Failed", func() (bool, string) {
		p := getPod(t, ns, "hog")
		return p.Status.Phase == corev1.PodFailed && p.Status.QOSClass == corev1.PodQOSGuaranteed, describe(p)
	})

	// Once the pod is gone, housekeeping removes its cgroup (upstream cleanupOrphanedPodCgroups):
	// runc removed only the containers' own.
	if err := cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), "limited", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the pod cgroup of limited removed", func() (bool, string) {
		for _, dir := range []string{filepath.Join("/sys/fs/cgroup", parent), filepath.Join("/sys/fs/cgroup/memory", parent)} {
			if _, err := os.Stat(dir); err == nil {
				return false, dir + " still exists"
			}
		}
		return true, ""
	})
}

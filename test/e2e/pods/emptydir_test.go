package pods

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// withEmptyDir gives the pod's container an emptyDir at /<name>.
func withEmptyDir(spec corev1.PodSpec, name string, medium corev1.StorageMedium, sizeLimit string) corev1.PodSpec {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium, SizeLimit: ptr.To(resource.MustParse(sizeLimit))}}})
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: name, MountPath: "/" + name})
	return spec
}

// emptyDir sizeLimit (upstream eviction_manager.go emptyDirLimitEviction, fed by the volume stats
// of fs_resource_analyzer.go): with volumes measured every 2 s (--volume-stats-agg-period), a pod
// that writes ~590 KB (`seq 1 100000`, real bytes in the volume's host directory) into an emptyDir
// of sizeLimit 100Ki is evicted — Failed, reason Evicted, upstream's message, no DisruptionTarget
// (upstream's local storage evictions pass no condition), a Warning Event,
// kubelet_evictions{eviction_signal="emptydirfs.limit"} — while a pod within the limit of its
// memory-backed emptyDir (a directory on the fake runtime) keeps running and shows its volume's
// usage in /stats/summary.
func TestEmptyDirSizeLimitEviction(t *testing.T) {
	n := startNode(t, "e2e-pods-emptydir", "--volume-stats-agg-period", "2s")
	ns := namespace(t)
	runningPod(t, ns, "within", withEmptyDir(podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "seq 1 1000 > /shm/small; sleep 3600"),
		"shm", corev1.StorageMediumMemory, "10Mi"))
	createPod(t, ns, "over", withEmptyDir(podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "seq 1 100000 > /cache/fill; sleep 3600"),
		"cache", corev1.StorageMediumDefault, "100Ki"))

	var evicted *corev1.Pod
	framework.Eventually(t, 90*time.Second, "over Evicted", func() (bool, string) {
		evicted = getPod(t, ns, "over")
		return evicted.Status.Phase == corev1.PodFailed && evicted.Status.Reason == "Evicted", describe(evicted)
	})
	const want = `Usage of EmptyDir volume "cache" exceeds the limit "100Ki". `
	if evicted.Status.Message != want {
		t.Errorf("message %q, want upstream's %q", evicted.Status.Message, want)
	}
	if c := podCondition(evicted, corev1.DisruptionTarget); c.Type != "" { // upstream's local storage evictions pass no condition
		t.Errorf("DisruptionTarget = %+v, want none, as upstream's emptyDirLimitEviction sets none", c)
	}
	if events := podEvents(t, ns, "over"); !hasEvent(events, "kubelet Warning Evicted "+want) {
		t.Errorf("events of over %q, want a Warning Evicted with the message", events)
	}
	admin := adminCert(t)
	if code, body := kubeletAPI(t, n, admin, "/metrics"); !strings.Contains(body, `kubelet_evictions{eviction_signal="emptydirfs.limit"} 1`) {
		t.Errorf("/metrics (%d) has no kubelet_evictions{eviction_signal=\"emptydirfs.limit\"} 1", code)
	}

	within := getPod(t, ns, "within")
	if within.Status.Phase != corev1.PodRunning {
		t.Fatalf("within no longer runs: %s", describe(within))
	}
	framework.Eventually(t, 30*time.Second, "within's shm volume in /stats/summary", func() (bool, string) {
		code, body := kubeletAPI(t, n, admin, "/stats/summary")
		if code != http.StatusOK {
			return false, fmt.Sprintf("%d %.300s", code, body)
		}
		var s statsapi.Summary
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("/stats/summary is not a Summary: %v", err)
		}
		for _, p := range s.Pods {
			if p.PodRef.Name != "within" {
				continue
			}
			for _, v := range p.VolumeStats {
				if v.Name == "shm" && v.UsedBytes != nil && *v.UsedBytes >= 3893 && ptr.Deref(v.CapacityBytes, 0) > 0 {
					return true, ""
				}
			}
			return false, fmt.Sprintf("volumes %+v", p.VolumeStats)
		}
		return false, "no pod within"
	})
}

package pods

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// localPV makes a 1Mi local PV of the class at dir on the node, pre-bound to ns/claim.
func localPV(t *testing.T, class, name, dir, node, ns, claim string) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		StorageClassName:              class,
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		ClaimRef: &corev1.ObjectReference{Namespace: ns, Name: claim},
	}}
	if _, err := cluster.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// emptyDir sizeLimit (upstream eviction_manager.go emptyDirLimitEviction, fed by the volume stats
// of fs_resource_analyzer.go): with volumes measured every 2 s (--volume-stats-agg-period), a pod
// that writes ~590 KB (`seq 1 100000`, real bytes in the volume's host directory) into an emptyDir
// of sizeLimit 100Ki is evicted — Failed, reason Evicted, upstream's message, no DisruptionTarget
// (upstream's local storage evictions pass no condition), a Warning Event,
// kubelet_evictions{eviction_signal="emptydirfs.limit"} — while a pod within the limit of its
// memory-backed emptyDir (a directory on the fake runtime) keeps running and shows its volume's
// usage in /stats/summary; its claim on a local PV is in kubelet_volume_stats_* (upstream
// collectors/volume_stats.go), labelled with its namespace and claim.
func TestEmptyDirSizeLimitEviction(t *testing.T) {
	n := startNode(t, "e2e-pods-emptydir", "--volume-stats-agg-period", "2s")
	ns := namespace(t)
	class := storageClass(t, ns)
	localPV(t, class, ns+"-local", t.TempDir(), n.name, ns, "data")
	if _, err := cluster.Client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(),
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: claimSpec(class)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	within := withEmptyDir(podSpec(n.name, corev1.RestartPolicyAlways, "sh", "-c", "seq 1 1000 > /shm/small; sleep 3600"),
		"shm", corev1.StorageMediumMemory, "10Mi")
	within.Volumes = append(within.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}})
	within.Containers[0].VolumeMounts = append(within.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
	runningPod(t, ns, "within", within)
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
	if events := cluster.Events(t, ns, "over"); !framework.HasEvent(events, "kubelet Warning Evicted "+want) {
		t.Errorf("events of over %q, want a Warning Evicted with the message", events)
	}
	admin := adminCert(t)
	if code, body := kubeletAPI(t, n, admin, "/metrics"); !strings.Contains(body, `kubelet_evictions{eviction_signal="emptydirfs.limit"} 1`) {
		t.Errorf("/metrics (%d) has no kubelet_evictions{eviction_signal=\"emptydirfs.limit\"} 1", code)
	}

	if p := getPod(t, ns, "within"); p.Status.Phase != corev1.PodRunning {
		t.Fatalf("within no longer runs: %s", describe(p))
	}
	claimSeries := `kubelet_volume_stats_capacity_bytes{namespace="` + ns + `",persistentvolumeclaim="data"} `
	framework.Eventually(t, 30*time.Second, "kubelet_volume_stats_* of the claim", func() (bool, string) {
		code, body := kubeletAPI(t, n, admin, "/metrics")
		return strings.Contains(body, claimSeries) && strings.Contains(body, `kubelet_volume_stats_inodes_used{namespace="`+ns+`",persistentvolumeclaim="data"} `) &&
			!strings.Contains(body, `persistentvolumeclaim="shm"`), fmt.Sprintf("%d: no %s", code, claimSeries)
	})
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

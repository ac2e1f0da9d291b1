package pods

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// storageClass makes a StorageClass with no provisioner (static PVs only, bound at once) named
// after the namespace, so the PV binder pairs this test's claims with this test's PVs only.
func storageClass(t *testing.T, ns string) string {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Provisioner: "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}
	if _, err := cluster.Client.StorageV1().StorageClasses().Create(context.Background(), sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
	return sc.Name
}

// hostPathPV makes a 1Mi hostPath PV of the class at dir; claim, if not "", pre-binds it to
// ns/claim, as an administrator does for a claim that must get this volume.
func hostPathPV(t *testing.T, class, name, dir, ns, claim string) {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		StorageClassName:              class,
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
	}}
	if claim != "" {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: ns, Name: claim}
	}
	if _, err := cluster.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

func claimSpec(class string) corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}
}

// podRunning waits until the pod runs its one container and returns it.
func podRunning(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	framework.Eventually(t, 2*time.Minute, name+" Running", func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pod = p
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil, describe(p)
	})
	return pod
}

func kubectlCat(t *testing.T, ns, pod, path string) string {
	t.Helper()
	out, err := cluster.KubectlOutput("exec", "-n", ns, pod, "--", "cat", path)
	if err != nil {
		t.Fatalf("kubectl exec %s -- cat %s: %v\n%s", pod, path, err, out)
	}
	return out
}

// A StatefulSet's volumeClaimTemplates claim a pre-created hostPath PV, which the PV binder
// binds; the volume manager waits for the binding, and the file the container writes lives in
// the PV's directory: it survives a container restart and the pod's deletion and re-creation
// (upstream: a StatefulSet keeps its pods' claims).
func TestStatefulSetKeepsDataOnHostPathPV(t *testing.T) {
	n := startNode(t, "e2e-pods-pvc-sts")
	ns := namespace(t)
	class := storageClass(t, ns)
	dir := filepath.Join(t.TempDir(), "pv")
	hostPathPV(t, class, ns+"-data", dir, "", "")
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, ServiceName: "db",
		Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: claimSpec(class)}},
	}}
	if _, err := cluster.Client.AppsV1().StatefulSets(ns).Create(context.Background(), sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := podRunning(t, ns, "db-0")
	if out, err := cluster.KubectlOutput("exec", "-n", ns, "db-0", "--", "sh", "-c", "echo kept > /data/greeting"); err != nil {
		t.Fatalf("write through the mount: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "greeting")); err != nil || string(got) != "kept\n" {
		t.Fatalf("the PV's directory holds %q, %v; want the file the container wrote", got, err)
	}

	id := first.Status.ContainerStatuses[0].ContainerID
	if code, out := framework.RunToExit(t, time.Minute, minikubelet, "fake-runtime", "kill-container", id[strings.Index(id, "://")+3:],
		"--exit-code", "9", "--socket", n.socket); code != 0 {
		t.Fatalf("kill-container: %d\n%s", code, out)
	}
	framework.Eventually(t, time.Minute, "the killed container restarted", func() (bool, string) {
		p := getPod(t, ns, "db-0")
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil, describe(p)
	})
	if got := kubectlCat(t, ns, "db-0", "/data/greeting"); got != "kept\n" {
		t.Errorf("after a container restart: %q, want kept", got)
	}

	if err := cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "db-0 re-created and Running", func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), "db-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.UID != first.UID && p.Status.Phase == corev1.PodRunning, describe(p)
	})
	if got := kubectlCat(t, ns, "db-0", "/data/greeting"); got != "kept\n" {
		t.Errorf("after the pod was re-created: %q, want kept", got)
	}
}

// A pod whose claim is not bound waits in ContainerCreating with upstream's FailedMount Event;
// once a PV appears and the binder binds the claim, the same pod starts (upstream: the
// populator's "PVC is not bound", returned by WaitForAttachAndMount). A pod with an nfs volume,
// which minikubelet has no plugin for, waits too, with a FailedMount that says so.
func TestPodWaitsForUnboundClaim(t *testing.T) {
	n := startNode(t, "e2e-pods-pvc-wait")
	ns := namespace(t)
	class := storageClass(t, ns)
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim"}, Spec: claimSpec(class)}
	if _, err := cluster.Client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	// Bound to the node by name: the scheduler would not place a pod whose claim is unbound
	// ("pod has unbound immediate PersistentVolumeClaims"); the kubelet is what must wait.
	spec.NodeSelector, spec.NodeName = nil, n.name
	pod := createPod(t, ns, "waiter", spec)

	want := "kubelet Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], " +
		"failed to process volumes=[data]: error processing PVC " + ns + "/claim: PVC is not bound"
	framework.Eventually(t, time.Minute, "ContainerCreating with a FailedMount Event", func() (bool, string) {
		events := cluster.Events(t, ns, "waiter")
		return kubectlStatus(t, ns, "waiter") == "ContainerCreating" && framework.HasEvent(events, want), strings.Join(events, "\n")
	})

	// A volume type minikubelet has no plugin for is refused, not skipped: upstream's "no
	// volume plugin matched", with what is missing and where the supported types are listed.
	nfs := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	nfs.Volumes = []corev1.Volume{{Name: "share", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/"}}}}
	nfs.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "share", MountPath: "/share"}}
	createPod(t, ns, "nfs", nfs)
	wantNFS := `kubelet Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[share], unattached volumes=[], ` +
		`failed to process volumes=[share]: failed to get Plugin from volumeSpec for volume "share" err=no volume plugin matched: ` +
		`volume type nfs is not supported by minikubelet (docs/features.md#volumes lists what is supported)`
	framework.Eventually(t, time.Minute, "the nfs pod refused with a FailedMount Event", func() (bool, string) {
		events := cluster.Events(t, ns, "nfs")
		return kubectlStatus(t, ns, "nfs") == "ContainerCreating" && framework.HasEvent(events, wantNFS), strings.Join(events, "\n")
	})

	hostPathPV(t, class, ns+"-late", filepath.Join(t.TempDir(), "pv"), ns, "claim")
	started := podRunning(t, ns, "waiter")
	if started.UID != pod.UID {
		t.Fatal("the pod was re-created")
	}
	if out, err := cluster.KubectlOutput("exec", "-n", ns, "waiter", "--", "sh", "-c", "echo ok > /data/f"); err != nil {
		t.Errorf("write to the bound volume: %v\n%s", err, out)
	}
}

// A generic ephemeral volume: the ephemeral-volume controller creates the claim <pod>-<volume>,
// owned by the pod, the PV binder binds it, and the kubelet mounts it after checking that the pod
// owns it (upstream ephemeral.VolumeIsForPod).
func TestGenericEphemeralVolume(t *testing.T) {
	n := startNode(t, "e2e-pods-pvc-eph")
	ns := namespace(t)
	class := storageClass(t, ns)
	dir := filepath.Join(t.TempDir(), "pv")
	hostPathPV(t, class, ns+"-eph", dir, ns, "eph-scratch")
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.NodeSelector, spec.NodeName = nil, n.name // the scheduler would wait for the claim to bind
	spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: claimSpec(class)}}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	pod := createPod(t, ns, "eph", spec)
	podRunning(t, ns, "eph")
	pvc, err := cluster.Client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), "eph-scratch", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(pvc, pod) {
		t.Fatalf("claim eph-scratch owned by %v, want controlled by the pod", pvc.OwnerReferences)
	}
	if out, err := cluster.KubectlOutput("exec", "-n", ns, "eph", "--", "sh", "-c", "echo eph > /scratch/f"); err != nil {
		t.Fatalf("write through the mount: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(got) != "eph\n" {
		t.Errorf("the PV's directory holds %q, %v; want the file the container wrote", got, err)
	}
}

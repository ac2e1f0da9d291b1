package containerd

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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// The volume manager on a real runtime: containerd bind-mounts what the kubelet hands it into
// real containers. One containerd and one node for all of it, the specs in parallel:
//   - subPath: a ConfigMap key is a file, pinned; subPathExpr; an escape through a symlink refused;
//   - a StatefulSet's claim on a hostPath PV keeps its file across a container restart and the
//     pod's re-creation; a pod whose claim is unbound waits in ContainerCreating;
//   - our CSI driver as a DaemonSet: a static PV and an inline volume through it;
//   - mountPropagation HostToContainer reaching containerd.
func TestVolumes(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"syncFrequency: 5s\nconfigMapAndSecretChangeDetectionStrategy: Watch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := startContainerd(t, "--csi-hostpath")
	n := startNode(t, "e2e-containerd-volumes", rt, "--config", cfgFile)
	t.Run("subPath", func(t *testing.T) { t.Parallel(); testSubPath(t, n) })
	t.Run("subPath escaping through a symlink", func(t *testing.T) { t.Parallel(); testSubPathEscape(t, n) })
	t.Run("StatefulSet on a hostPath PV", func(t *testing.T) { t.Parallel(); testStatefulSetPV(t, rt, n) })
	t.Run("unbound claim", func(t *testing.T) { t.Parallel(); testUnboundClaim(t, n) })
	t.Run("CSI driver as a DaemonSet", func(t *testing.T) { t.Parallel(); testCSIDaemonSet(t, n) })
	t.Run("mountPropagation", func(t *testing.T) { t.Parallel(); testMountPropagation(t, n) })
}

// subPath (upstream makeMounts and pkg/volume/util/subpath): a ConfigMap key mounted with subPath
// is a file in the container, and keeps the content it started with when the ConfigMap changes
// (the kubelet pinned that file; the whole volume mounted beside it shows the update); an emptyDir
// directory named by subPathExpr from the pod's name is where the container's writes land.
func testSubPath(t *testing.T, n *node) {
	ns := namespace(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"app.conf": "color=blue"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sh", "-c", "echo hi > /logs/out; sleep 3600")
	spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
		{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/config"},
		{Name: "config", MountPath: "/etc/app/app.conf", SubPath: "app.conf"},
		{Name: "logs", MountPath: "/logs", SubPathExpr: "$(POD_NAME)"},
	}
	pod := runningPod(t, ns, "app", spec)
	exec := func(args ...string) string {
		out, code := kubectl(t, append([]string{"-n", ns, "exec", "app", "--"}, args...)...)
		if code != 0 {
			t.Fatalf("kubectl exec %v: exit %d: %s", args, code, out)
		}
		return out
	}
	if got := exec("sh", "-c", "test -f /etc/app/app.conf && cat /etc/app/app.conf"); got != "color=blue" {
		t.Fatalf("/etc/app/app.conf = %q, want a file with the key's content", got)
	}
	host := filepath.Join(n.rootDir, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir", "logs", "app", "out")
	if data, err := os.ReadFile(host); err != nil || string(data) != "hi\n" {
		t.Errorf("%s = %q, %v; want the container's write in the directory named after the pod", host, data, err)
	}
	cm.Data["app.conf"] = "color=green"
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the update in the whole volume", func() (bool, string) {
		got := exec("cat", "/etc/config/app.conf")
		return got == "color=green", got
	})
	if got := exec("cat", "/etc/app/app.conf"); got != "color=blue" {
		t.Errorf("/etc/app/app.conf = %q after the update, want it unchanged (as upstream's bind mount)", got)
	}
}

// An init container of the real runtime links "escape" to / in an emptyDir; the app container
// mounts subPath "escape" of it. Handing containerd that path would bind-mount the node's root
// (CVE-2017-1002101): the kubelet refuses, with upstream's CreateContainerConfigError message and
// a Failed Event, and the container never starts.
func testSubPathEscape(t *testing.T, n *node) {
	ns := namespace(t)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	spec.InitContainers = []corev1.Container{{Name: "mklink", Image: busyboxImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"ln", "-s", "/", "/work/escape"}, VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/work"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/host", SubPath: "escape"}}
	createPod(t, ns, "escape", spec)
	const msg = `failed to prepare subPath for volumeMount "work" of container "app"`
	framework.Eventually(t, 2*time.Minute, "CreateContainerConfigError: "+msg, func() (bool, string) {
		p := getPod(t, ns, "escape")
		for _, s := range p.Status.ContainerStatuses {
			if w := s.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" && w.Message == msg {
				return true, ""
			}
		}
		return false, describe(p)
	})
	framework.Eventually(t, time.Minute, "a Failed Event with the message", func() (bool, string) {
		events := cluster.Events(t, ns, "escape")
		return framework.HasEvent(events, "kubelet Warning Failed Error: "+msg), strings.Join(events, "\n")
	})
	p := getPod(t, ns, "escape")
	if s := p.Status.ContainerStatuses[0]; s.ContainerID != "" || s.RestartCount != 0 {
		t.Errorf("the app container was created: %+v", s)
	}
}

// storageClass makes a StorageClass with no provisioner (static PVs, bound at once) named after
// the namespace, so the PV binder pairs this spec's claims with this spec's PVs only.
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

// createPV makes a 1Mi Retain PV of the class with source; claim, if not "", pre-binds it to
// ns/claim, as an administrator does for a claim that must get this volume.
func createPV(t *testing.T, class, name string, source corev1.PersistentVolumeSource, ns, claim string) *corev1.PersistentVolume {
	t.Helper()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		StorageClassName:              class,
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        source,
	}}
	if claim != "" {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: ns, Name: claim}
	}
	pv, err := cluster.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return pv
}

func hostPathSource(dir string) corev1.PersistentVolumeSource {
	return corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}
}

func claimSpec(class string) corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}
}

func createClaim(t *testing.T, ns, name, class string) {
	t.Helper()
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: claimSpec(class)}
	if _, err := cluster.Client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// catFile is `kubectl exec pod -- cat path`, which must succeed.
func catFile(t *testing.T, ns, pod, path string) string {
	t.Helper()
	out, code := kubectl(t, "-n", ns, "exec", pod, "--", "cat", path)
	if code != 0 {
		t.Fatalf("kubectl exec %s -- cat %s: exit %d\n%s", pod, path, code, out)
	}
	return out
}

// A StatefulSet's volumeClaimTemplates claim a pre-created hostPath PV, which the PV binder
// binds; containerd bind-mounts the PV's directory, so the file the container writes is on the
// node, and it is there after containerd's container is stopped and restarted and after the pod
// is deleted and re-created (upstream: a StatefulSet keeps its pods' claims).
func testStatefulSetPV(t *testing.T, rt *daemon, n *node) {
	ns := namespace(t)
	class := storageClass(t, ns)
	dir := filepath.Join(t.TempDir(), "pv")
	createPV(t, class, ns+"-data", hostPathSource(dir), "", "")
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
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
	first := waitPodRunning(t, ns, "db-0", "")
	if out, code := kubectl(t, "-n", ns, "exec", "db-0", "--", "sh", "-c", "echo kept > /data/greeting"); code != 0 {
		t.Fatalf("write through the mount: exit %d\n%s", code, out)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "greeting")); err != nil || string(got) != "kept\n" {
		t.Fatalf("the PV's directory holds %q, %v; want the file the container wrote", got, err)
	}

	id := strings.TrimPrefix(first.Status.ContainerStatuses[0].ContainerID, "containerd://")
	rt.crictl(t, "stop", "--timeout", "0", id)
	framework.Eventually(t, time.Minute, "the stopped container restarted", func() (bool, string) {
		p := getPod(t, ns, "db-0")
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil, describe(p)
	})
	if got := catFile(t, ns, "db-0", "/data/greeting"); got != "kept\n" {
		t.Errorf("after a container restart: %q, want kept", got)
	}

	if err := cluster.Client.CoreV1().Pods(ns).Delete(context.Background(), "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodRunning(t, ns, "db-0", first.UID)
	if got := catFile(t, ns, "db-0", "/data/greeting"); got != "kept\n" {
		t.Errorf("after the pod was re-created: %q, want kept", got)
	}
}

// waitPodRunning waits until pod name (a pod other than the one with UID old, if set) runs its
// container, and returns it.
func waitPodRunning(t *testing.T, ns, name string, old types.UID) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	framework.Eventually(t, 2*time.Minute, name+" Running", func() (bool, string) {
		p, err := cluster.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		pod = p
		return p.UID != old && p.Status.Phase == corev1.PodRunning && isReady(p), describe(p)
	})
	return pod
}

// A pod whose claim is not bound waits in ContainerCreating with upstream's FailedMount Event,
// and containerd gets no sandbox for it; once a PV appears and the binder binds the claim, the
// same pod starts and writes through the bind mount; the claim's mount with readOnly: true is a
// read-only bind mount of the same directory.
func testUnboundClaim(t *testing.T, n *node) {
	ns := namespace(t)
	class := storageClass(t, ns)
	createClaim(t, ns, "claim", class)
	spec := busyboxPod(n.name, corev1.RestartPolicyAlways, "sleep", "3600")
	spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "data", MountPath: "/ro", ReadOnly: true}}
	// Bound to the node by name: the scheduler would not place a pod whose claim is unbound.
	spec.NodeSelector, spec.NodeName = nil, n.name
	createPod(t, ns, "waiter", spec)
	want := "kubelet Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], " +
		"failed to process volumes=[data]: error processing PVC " + ns + "/claim: PVC is not bound"
	framework.Eventually(t, time.Minute, "ContainerCreating with a FailedMount Event", func() (bool, string) {
		events := cluster.Events(t, ns, "waiter")
		out, _ := kubectl(t, "-n", ns, "get", "pod", "waiter", "--no-headers")
		return strings.Contains(out, " ContainerCreating ") && framework.HasEvent(events, want), out + strings.Join(events, "\n")
	})
	before := getPod(t, ns, "waiter")

	dir := filepath.Join(t.TempDir(), "pv")
	createPV(t, class, ns+"-late", hostPathSource(dir), ns, "claim")
	started := waitPodRunning(t, ns, "waiter", "")
	if started.UID != before.UID {
		t.Fatal("the pod was re-created")
	}
	if out, code := kubectl(t, "-n", ns, "exec", "waiter", "--", "sh", "-c", "echo ok > /data/f"); code != 0 {
		t.Fatalf("write to the bound volume: exit %d\n%s", code, out)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(got) != "ok\n" {
		t.Errorf("the PV's directory holds %q, %v; want the container's write", got, err)
	}
	// The same directory at /ro, bind-mounted read-only by containerd: readable, not writable.
	if got := catFile(t, ns, "waiter", "/ro/f"); got != "ok\n" {
		t.Errorf("/ro/f = %q, want the file written through /data", got)
	}
	if out, code := kubectl(t, "-n", ns, "exec", "waiter", "--", "sh", "-c", "echo no > /ro/g"); code == 0 || !strings.Contains(out, "Read-only file system") {
		t.Errorf("writing through the read-only mount: exit %d, %q; want it refused (Read-only file system)", code, out)
	}
}

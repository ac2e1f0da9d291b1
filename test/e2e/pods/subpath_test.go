package pods

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// Upstream subPath and subPathExpr (kubelet_pods.go makeMounts, pkg/volume/util/subpath), three
// pods on one node, started together:
//   - a ConfigMap key mounted with subPath is a file with the key's content (kubectl exec cat; ls
//     of its directory lists it), and it keeps that content after the ConfigMap changes, while the
//     whole volume mounted beside it shows the update;
//   - a subPath through a symlink to / that an init container made in an emptyDir is refused
//     (CVE-2017-1002101): the container waits with CreateContainerConfigError and upstream's
//     message, and a Failed Event says it;
//   - subPathExpr with the pod's name from the downward API env: the container writes into the
//     emptyDir's directory named after the pod.
func TestSubPath(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"syncFrequency: 5s\nconfigMapAndSecretChangeDetectionStrategy: Watch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "e2e-pods-subpath", "--config", cfgFile)
	ns := namespace(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"app.conf": "color=blue"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	createPod(t, ns, "config", configSubPathSpec(n.name))
	createPod(t, ns, "escape", escapeSubPathSpec(n.name))
	expr := createPod(t, ns, "expr", exprSubPathSpec(n.name))

	t.Run("a ConfigMap key is a file, not updated", func(t *testing.T) {
		waitRunning(t, ns, "config")
		exec := func(args ...string) string {
			out, code := kubectl(t, "", append([]string{"-n", ns, "exec", "config", "--"}, args...)...)
			if code != 0 {
				t.Fatalf("kubectl exec %v: exit %d: %s", args, code, out)
			}
			return out
		}
		if got := exec("cat", "/etc/app/app.conf"); got != "color=blue" {
			t.Fatalf("cat /etc/app/app.conf = %q, want the key's content", got)
		}
		if got := exec("ls", "/etc/app"); got != "app.conf\n" {
			t.Errorf("ls /etc/app = %q, want the one file", got)
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
			t.Errorf("cat /etc/app/app.conf = %q after the update, want it unchanged (as upstream's bind mount)", got)
		}
	})

	t.Run("a subPath through a symlink to / is refused", func(t *testing.T) {
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
			events := kubeletWarnings(t, ns, n.name)
			for _, e := range events {
				if strings.HasPrefix(e, "Pod escape: Failed Error: "+msg+" ") {
					return true, ""
				}
			}
			return false, strings.Join(events, "\n")
		})
	})

	t.Run("subPathExpr with the pod's name", func(t *testing.T) {
		waitRunning(t, ns, "expr")
		if out, code := kubectl(t, "", "-n", ns, "exec", "expr", "--", "cat", "/var/log/app/out"); code != 0 || out != "hi\n" {
			t.Errorf("cat /var/log/app/out = %q (exit %d), want hi", out, code)
		}
		host := filepath.Join(n.rootDir, "pods", string(expr.UID), "volumes", "kubernetes.io~empty-dir", "logs", "expr", "out")
		if data, err := os.ReadFile(host); err != nil || string(data) != "hi\n" {
			t.Errorf("%s = %q, %v; want the file in the emptyDir's directory named after the pod", host, data, err)
		}
	})
}

func waitRunning(t *testing.T, ns, name string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, name+" Running", func() (bool, string) {
		p := getPod(t, ns, name)
		return p.Status.Phase == corev1.PodRunning && isReady(p), describe(p)
	})
}

// configSubPathSpec mounts ConfigMap "app" whole at /etc/config and its key app.conf alone at
// /etc/app/app.conf.
func configSubPathSpec(node string) corev1.PodSpec {
	spec := podSpec(node, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/config"},
		{Name: "config", MountPath: "/etc/app/app.conf", SubPath: "app.conf"},
	}
	return spec
}

// escapeSubPathSpec: an init container links "escape" to / in an emptyDir, and the main
// container mounts subPath "escape" of it.
func escapeSubPathSpec(node string) corev1.PodSpec {
	spec := podSpec(node, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	spec.InitContainers = []corev1.Container{{Name: "mklink", Image: "busybox:1.36", Command: []string{"ln", "-s", "/", "/work/escape"},
		VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/work"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/host", SubPath: "escape"}}
	return spec
}

// exprSubPathSpec mounts the emptyDir's directory $(POD_NAME) at /var/log/app and writes there.
func exprSubPathSpec(node string) corev1.PodSpec {
	spec := podSpec(node, corev1.RestartPolicyAlways, "sh", "-c", "echo hi > /var/log/app/out; sleep infinity")
	spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "logs", MountPath: "/var/log/app", SubPathExpr: "$(POD_NAME)"}}
	return spec
}

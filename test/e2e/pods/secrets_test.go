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
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/cri/remote"
	"github.com/minikubelet/minikubelet/test/e2e/framework"
)

// execIn runs a command in the pod's container through the node's CRI socket (ExecSync), as
// `crictl exec -s` does, and returns its stdout.
func execIn(t *testing.T, n *node, containerID string, cmd ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := remote.Dial(ctx, "unix://"+n.socket, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: cmd, Timeout: 10})
	if err != nil {
		return "", err
	}
	return string(resp.GetStdout()) + string(resp.GetStderr()), nil
}

// Upstream behaviour of the secret/configmap managers and projection: a missing required Secret
// keeps the container in CreateContainerConfigError; once the Secret exists the same pod starts;
// env comes from Secrets, ConfigMaps and the downward API; a configMap volume is projected and an
// update of the ConfigMap reaches the file within the sync period (Watch strategy), through an
// atomic ..data swap.
func TestSecretsAndConfigMaps(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"syncFrequency: 5s\nconfigMapAndSecretChangeDetectionStrategy: Watch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "e2e-pods-secrets", "--config", cfgFile)
	ns := namespace(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config"}, Data: map[string]string{"greeting": "hello", "mode": "blue"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := podSpec(n.name, corev1.RestartPolicyAlways, "sleep", "infinity")
	spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "greeting"}}},
		{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}
	spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/config", ReadOnly: true}}
	pod := createPod(t, ns, "app", spec)

	framework.Eventually(t, 2*time.Minute, "CreateContainerConfigError for the missing Secret", func() (bool, string) {
		p := getPod(t, ns, "app")
		if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return false, describe(p)
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, `secret "db" not found`), describe(p)
	})

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "s3cret"}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var containerID string
	framework.Eventually(t, 2*time.Minute, "the same pod Running once the Secret exists", func() (bool, string) {
		p := getPod(t, ns, "app")
		if p.UID != pod.UID {
			t.Fatalf("the pod was recreated")
		}
		if p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil {
			containerID = p.Status.ContainerStatuses[0].ContainerID[strings.Index(p.Status.ContainerStatuses[0].ContainerID, "://")+3:]
			return true, ""
		}
		return false, describe(p)
	})

	env, err := execIn(t, n, containerID, "env")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GREETING=hello", "PASSWORD=s3cret", "POD_NAME=app", "CFG_mode=blue", "CFG_greeting=hello"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	if out, err := execIn(t, n, containerID, "cat", "/etc/config/greeting"); err != nil || out != "hello" {
		t.Errorf("cat /etc/config/greeting = %q, %v", out, err)
	}

	// The projected directory uses the atomic writer's layout.
	volDir := filepath.Join(n.rootDir, "pods", string(pod.UID), "volumes", "kubernetes.io~configmap", "config")
	if target, err := os.Readlink(filepath.Join(volDir, "..data")); err != nil || !strings.HasPrefix(target, "..") {
		t.Errorf("..data -> %q (err %v), want a timestamped hidden directory", target, err)
	}

	cm.Data["greeting"] = "bonjour"
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, "the updated ConfigMap in the mounted file", func() (bool, string) {
		out, err := execIn(t, n, containerID, "cat", "/etc/config/greeting")
		return err == nil && out == "bonjour", out
	})
}

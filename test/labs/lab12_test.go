package labs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Lab 12: the pod before its PV (FailedMount, then Running once the claim binds), the ConfigMap
// updated (the whole volume follows, the subPath file does not), the subPath escape refused,
// the pod deleted and created again. The PV's hostPath is a temporary directory instead of the
// README's /tmp/minikubelet-lab12, and the node syncs every 10 s (lab 07's config) so the
// ConfigMap's update shows in seconds.
func (n *node) lab12(t *testing.T) {
	syncEvery10s := filepath.Join(labDir("07-secret-configmap-managers"), "kubelet-get.yaml")
	if n.proc == nil { // run alone
		n.start(t, "--config", syncEvery10s)
	} else {
		n.restart(t, "--config", syncEvery10s)
	}
	n.expectMissing(t, "12", "no FailedMount Event on default/lab12-vol says its claim was not bound")
	dir := labDir("12-volume-manager")
	kubectl(t, "apply", "-f", filepath.Join(dir, "lab12.yaml"))
	// sed "s/NODE_NAME/$NODE/" pod.yaml | kubectl apply -f -
	podManifest := n.bound(t, filepath.Join(dir, "pod.yaml"), "NODE_NAME", n.name)
	kubectl(t, "apply", "-f", podManifest)
	waitFor(t, time.Minute, "a FailedMount Event on lab12-vol", func() (bool, string) {
		out := kubectl(t, "get", "events", "--field-selector", "involvedObject.name=lab12-vol,reason=FailedMount", "-o", "jsonpath={.items[*].message}")
		return strings.Contains(out, "PVC is not bound"), out
	})
	t.Logf("kubectl get pod lab12-vol (the claim unbound):\n%s", kubectl(t, "get", "pod", "lab12-vol"))
	t.Logf("FailedMount: %s", kubectl(t, "get", "events", "--field-selector", "involvedObject.name=lab12-vol,reason=FailedMount", "-o", "jsonpath={.items[0].message}"))

	kubectl(t, "apply", "-f", n.bound(t, filepath.Join(dir, "lab12-pv.yaml"), "/tmp/minikubelet-lab12", filepath.Join(t.TempDir(), "pv")))
	waitRunning(t, "lab12-vol")

	kubectl(t, "patch", "configmap", "lab12-config", "-p", `{"data":{"app.conf":"color=green"}}`)
	waitFor(t, time.Minute, "the update in /etc/config/app.conf", func() (bool, string) {
		got := kubectl(t, "exec", "lab12-vol", "--", "cat", "/etc/config/app.conf")
		return got == "color=green", got
	})
	if got := kubectl(t, "exec", "lab12-vol", "--", "cat", "/etc/app/app.conf"); got != "color=blue" {
		t.Errorf("cat /etc/app/app.conf = %q after the update; the subPath file keeps color=blue", got)
	}

	kubectl(t, "apply", "-f", filepath.Join(dir, "escape.yaml"))
	kubectl(t, "delete", "pod", "lab12-vol")
	kubectl(t, "apply", "-f", podManifest)
	waitRunning(t, "lab12-vol")
	if got := kubectl(t, "exec", "lab12-vol", "--", "cat", "/etc/app/app.conf"); got != "color=green" {
		t.Errorf("cat /etc/app/app.conf = %q in the new pod, want color=green", got)
	}
	t.Logf("kubectl describe pod lab12-escape:\n%s", kubectl(t, "describe", "pod", "lab12-escape"))
	n.expectPass(t, "12", time.Minute)
}

// bound writes a copy of manifest with old replaced by new, as the README's sed does.
func (n *node) bound(t *testing.T, manifest, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(manifest))
	if err := os.WriteFile(out, []byte(strings.ReplaceAll(string(data), old, new)), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

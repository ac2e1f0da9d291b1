package podsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

const goodManifest = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.27
`

// Pins upstream common.go applyDefaults for file pods, and our stand-in for API validation.
func TestManifestToPod(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		wantReason string
		wantErr    string
	}{
		{name: "good YAML", data: goodManifest},
		{name: "good JSON", data: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}]}}`},
		{name: "unknown fields are ignored, as upstream", data: goodManifest + "  futureField: 1\n"},
		{name: "broken YAML", data: "apiVersion: v1\nkind: Pod\nspec: [", wantReason: ReasonFailedToParseManifest, wantErr: "decode"},
		{name: "wrong type", data: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: 3}", wantReason: ReasonFailedToParseManifest, wantErr: "decode"},
		{name: "empty file", data: "", wantReason: ReasonFailedToParseManifest, wantErr: `kind ""`},
		{name: "a Deployment", data: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}", wantReason: ReasonFailedToParseManifest, wantErr: "kind Pod"},
		{name: "no name", data: "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c, image: i}]}", wantReason: ReasonInvalidManifest, wantErr: "metadata.name is required"},
		{name: "bad name", data: "apiVersion: v1\nkind: Pod\nmetadata: {name: Web_1}\nspec: {containers: [{name: c, image: i}]}", wantReason: ReasonInvalidManifest, wantErr: "not a valid pod name"},
		{name: "no containers", data: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {}", wantReason: ReasonInvalidManifest, wantErr: "at least one container"},
		{name: "container without image", data: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}", wantReason: ReasonInvalidManifest, wantErr: "spec.containers[0].image is required"},
		{name: "container without name", data: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{image: i}]}", wantReason: ReasonInvalidManifest, wantErr: "spec.containers[0].name is required"},
		{name: "duplicate container names across init and app containers", data: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {initContainers: [{name: c, image: i}], containers: [{name: c, image: i}]}", wantReason: ReasonInvalidManifest, wantErr: "used by another container"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, reason, err := manifestToPod([]byte(tc.data), "/etc/m/web.yaml", "Node1")
			if tc.wantErr != "" {
				if err == nil || reason != tc.wantReason || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got reason %q err %v, want reason %q and an error containing %q", reason, err, tc.wantReason, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Name != "web-node1" || pod.Namespace != "default" || pod.Spec.NodeName != "Node1" {
				t.Errorf("name/namespace/node = %s/%s/%s, want default/web-node1 on Node1 (name suffixed with the lower-cased node)", pod.Namespace, pod.Name, pod.Spec.NodeName)
			}
			if pod.UID == "" || pod.Annotations[ConfigHashAnnotationKey] != string(pod.UID) || !kubecontainer.IsStaticPod(pod) {
				t.Errorf("uid %q annotations %v: want config.hash = uid and config.source = file", pod.UID, pod.Annotations)
			}
			if _, ok := pod.Annotations[ConfigFirstSeenAnnotationKey]; ok {
				t.Errorf("the file source set config.seen; only the merger sets it, once")
			}
			if len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0] != (corev1.Toleration{Operator: corev1.TolerationOpExists}) {
				t.Errorf("tolerations = %v, want one that tolerates every taint", pod.Spec.Tolerations)
			}
			c := pod.Spec.Containers[0]
			if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways || *pod.Spec.TerminationGracePeriodSeconds != 30 ||
				c.ImagePullPolicy != corev1.PullIfNotPresent || c.TerminationMessagePath != "/dev/termination-log" ||
				pod.Status.Phase != corev1.PodPending {
				t.Errorf("defaults not applied: restart %s grace %d pull %s msgPath %s phase %s", pod.Spec.RestartPolicy,
					*pod.Spec.TerminationGracePeriodSeconds, c.ImagePullPolicy, c.TerminationMessagePath, pod.Status.Phase)
			}
		})
	}
}

// A static pod's UID (and config.hash) is stable across re-reads and changes with the content,
// the node and the path.
func TestStaticPodUID(t *testing.T) {
	base := staticPodUID([]byte(goodManifest), "/m/web.yaml", "n1")
	if again := staticPodUID([]byte(goodManifest), "/m/web.yaml", "n1"); again != base {
		t.Errorf("same input gave %s and %s", base, again)
	}
	for name, uid := range map[string]string{
		"content": string(staticPodUID([]byte(goodManifest+"\n"), "/m/web.yaml", "n1")),
		"path":    string(staticPodUID([]byte(goodManifest), "/m/web2.yaml", "n1")),
		"node":    string(staticPodUID([]byte(goodManifest), "/m/web.yaml", "n2")),
	} {
		if uid == string(base) {
			t.Errorf("changing the %s kept the UID %s", name, uid)
		}
	}
	if len(base) != 32 {
		t.Errorf("uid %q has %d hex digits, want 32", base, len(base))
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	// Write atomically, as a manifest should be: a dotfile (ignored) renamed into place.
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func newFileOnlySources(t *testing.T, dir string, clk *testingclock.FakeClock, recorder record.EventRecorder) *Sources {
	t.Helper()
	s, err := New(Config{NodeName: "n1", ManifestDir: dir, Recorder: recorder, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Pins upstream file.go: good manifests become pods while bad ones are skipped; dotfiles,
// subdirectories and other extensions are ignored; an edited file is REMOVE old UID + ADD new
// (the UID hashes the content); a deleted file is REMOVE. Ours adds: a bad manifest is reported
// with one Warning event on the Node per file content, not on every re-read.
func TestFileSourceSyncOnce(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "web.yaml"), goodManifest)
	writeFile(t, filepath.Join(dir, "broken.yaml"), "apiVersion: v1\nkind: Pod\nspec: [")
	writeFile(t, filepath.Join(dir, "invalid.json"), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"noimage"},"spec":{"containers":[{"name":"c"}]}}`)
	writeFile(t, filepath.Join(dir, ".swap.yaml"), goodManifest)
	writeFile(t, filepath.Join(dir, "README.md"), "not a manifest")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	recorder := record.NewFakeRecorder(10)
	s := newFileOnlySources(t, dir, clk, recorder)
	if s.AllSourcesReady() {
		t.Error("ready before the first read")
	}

	s.file.syncOnce(ctx)
	u := mustReceive(t, s.updates)
	if u.Op != ADD || u.Source != FileSource || len(u.Pods) != 1 || u.Pods[0].Name != "web-n1" {
		t.Fatalf("got %v from %s with %v, want ADD of web-n1 from file", u.Op, u.Source, u.Pods)
	}
	oldUID := u.Pods[0].UID
	if !s.AllSourcesReady() {
		t.Error("not ready after the first read")
	}
	// Two more periodic re-reads of the same content: no updates, no new events.
	s.file.syncOnce(ctx)
	s.file.syncOnce(ctx)
	mustBeEmpty(t, s.updates)
	events := drainEvents(recorder)
	if len(events) != 2 ||
		!strings.HasPrefix(events[0], "Warning FailedToParseManifest") || !strings.Contains(events[0], "broken.yaml") ||
		!strings.HasPrefix(events[1], "Warning InvalidManifest") || !strings.Contains(events[1], "invalid.json") {
		t.Fatalf("events = %q, want one FailedToParseManifest for broken.yaml and one InvalidManifest for invalid.json", events)
	}

	// Editing the good file changes its UID: the old pod is removed, the new one added.
	writeFile(t, filepath.Join(dir, "web.yaml"), strings.Replace(goodManifest, "nginx:1.27", "nginx:1.28", 1))
	// A new broken content in broken.yaml is reported again.
	writeFile(t, filepath.Join(dir, "broken.yaml"), "{")
	s.file.syncOnce(ctx)
	if u := mustReceive(t, s.updates); u.Op != REMOVE || u.Pods[0].UID != oldUID {
		t.Errorf("got %v of %v, want REMOVE of %s", u.Op, uids(u.Pods), oldUID)
	}
	u = mustReceive(t, s.updates)
	if u.Op != ADD || u.Pods[0].UID == oldUID || u.Pods[0].Spec.Containers[0].Image != "nginx:1.28" {
		t.Errorf("got %v of %v, want ADD of the edited pod with a new UID", u.Op, uids(u.Pods))
	}
	if events := drainEvents(recorder); len(events) != 1 || !strings.Contains(events[0], "broken.yaml") {
		t.Errorf("events = %q, want one for the new content of broken.yaml", events)
	}

	// Deleting the file removes the pod.
	if err := os.Remove(filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	s.file.syncOnce(ctx)
	if u := mustReceive(t, s.updates); u.Op != REMOVE || len(u.Pods) != 1 {
		t.Errorf("got %v of %v, want REMOVE of web-n1", u.Op, uids(u.Pods))
	}
	mustBeEmpty(t, s.updates)
}

// Pins upstream listConfig: a manifest directory that does not exist is an empty set, so the
// file source still becomes ready.
func TestFileSourceMissingDir(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	clk := testingclock.NewFakeClock(time.Now())
	s := newFileOnlySources(t, filepath.Join(t.TempDir(), "nope"), clk, record.NewFakeRecorder(10))
	s.file.syncOnce(ctx)
	if u := mustReceive(t, s.updates); u.Op != ADD || len(u.Pods) != 0 {
		t.Errorf("got %v of %v, want an empty ADD", u.Op, uids(u.Pods))
	}
	if !s.AllSourcesReady() {
		t.Error("not ready after reading a missing directory")
	}
}

// The periodic re-read alone (fsnotify off) picks up a new manifest at the next tick of the
// injected clock (upstream fileCheckFrequency, default 20 s).
func TestFileSourceRunRereadsOnTick(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	dir := t.TempDir()
	clk := testingclock.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	s := newFileOnlySources(t, dir, clk, record.NewFakeRecorder(10))
	s.file.notify = false
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	if u := waitUpdate(t, ctx, s.Updates()); u.Op != ADD || len(u.Pods) != 0 {
		t.Fatalf("got %v of %v, want the empty first set", u.Op, uids(u.Pods))
	}
	writeFile(t, filepath.Join(dir, "web.yaml"), goodManifest)
	clk.Step(20 * time.Second)
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != ADD || len(u.Pods) != 1 || u.Pods[0].Name != "web-n1" {
		t.Fatalf("got %v of %v, want ADD of web-n1 after one tick", u.Op, uids(u.Pods))
	}
	cancel()
	<-done
}

// With fsnotify on, a new manifest shows up without waiting for the tick.
func TestFileSourceRunNotify(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	dir := t.TempDir()
	clk := testingclock.NewFakeClock(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	s := newFileOnlySources(t, dir, clk, record.NewFakeRecorder(10))
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	if u := waitUpdate(t, ctx, s.Updates()); u.Op != ADD || len(u.Pods) != 0 {
		t.Fatalf("got %v of %v, want the empty first set", u.Op, uids(u.Pods))
	}
	writeFile(t, filepath.Join(dir, "web.yaml"), goodManifest)
	if u := waitUpdate(t, ctx, s.Updates()); u.Op != ADD || len(u.Pods) != 1 {
		t.Fatalf("got %v of %v, want ADD of web-n1 on notification", u.Op, uids(u.Pods))
	}
	cancel()
	<-done
}

func TestIsManifestName(t *testing.T) {
	for name, want := range map[string]bool{
		"a.yaml": true, "a.yml": true, "a.json": true, ".a.yaml": false, "a.yaml.swp": false, "a.txt": false, "a": false,
	} {
		if got := isManifestName(name); got != want {
			t.Errorf("isManifestName(%q) = %v, want %v", name, got, want)
		}
	}
}

func drainEvents(r *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

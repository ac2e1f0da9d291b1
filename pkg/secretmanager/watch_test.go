package secretmanager

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

// Pins objectCache (watch_based_manager.go): pods sharing an object share ONE list/watch, it
// lives while any pod references it, and is stopped once unreferenced for 5× resync.
func TestWatchSharedAndIdleExpiry(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyWatch, Resync: time.Minute}, secret("db", "v1"))
	web, api := podWith("web", "uid-1", []string{"db"}, nil), podWith("api", "uid-2", []string{"db"}, nil)

	r.m.RegisterPod(web)
	r.m.RegisterPod(api)
	w := r.nextWatch(ctx) // the reflector listed, then opened its watch
	if s, err := r.m.GetSecret(ctx, ns, "db"); err != nil || string(s.Data["key"]) != "v1" {
		t.Fatalf("GetSecret = %v, %v", s, err)
	}
	r.wantRequests("two pods, one secret", "secrets", 0, 1, 1)

	r.m.UnregisterPod(web)
	if _, err := r.m.GetSecret(ctx, ns, "db"); err != nil {
		t.Errorf("api still references db: %v", err)
	}
	if r.clock.HasWaiters() {
		t.Error("an idle timer was armed while a pod still references the secret")
	}

	r.m.UnregisterPod(api)
	if _, err := r.m.GetSecret(ctx, ns, "db"); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("Get after the last pod unregistered: %v, want not registered", err)
	}
	r.clock.Step(5*time.Minute - time.Second)
	if w.isStopped() || r.secretItem("db") == nil {
		t.Fatal("the watch was dropped before 5× Resync")
	}
	r.clock.Step(time.Second) // 5 × Resync since the last unregister: the timer's turn runs now
	if r.secretItem("db") != nil {
		t.Error("the watch store still holds db after the idle window")
	}
	w.waitStopped(t, ctx)
	r.wantRequests("at the end", "secrets", 0, 1, 1)
}

// A pod re-created within the idle window finds the watch warm: no new LIST or WATCH, and the
// old idle timer no longer applies.
func TestWatchReferencedAgainWithinIdleWindow(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyWatch, Resync: time.Minute}, secret("db", "v1"))
	r.m.RegisterPod(podWith("web", "uid-1", []string{"db"}, nil))
	w := r.nextWatch(ctx)
	r.m.UnregisterPod(podWith("web", "uid-1", nil, nil))
	r.clock.Step(time.Minute)
	r.m.RegisterPod(podWith("web", "uid-2", []string{"db"}, nil)) // re-created: new UID
	r.clock.Step(10 * time.Minute)                                // well past the first timer
	if w.isStopped() || r.secretItem("db") == nil {
		t.Fatal("the idle timer dropped a watch that a pod references again")
	}
	if _, err := r.m.GetSecret(ctx, ns, "db"); err != nil {
		t.Fatal(err)
	}
	r.wantRequests("re-created pod", "secrets", 0, 1, 1)
}

// Pins the immutable branch of objectCache.Get: once an immutable object is seen its watch
// stops, and its last version keeps being served — even after the object is deleted.
func TestWatchImmutableStopsWatch(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyWatch}, immutableSecret("ca", "v1"))
	r.m.RegisterPod(podWith("web", "uid-1", []string{"ca"}, nil))
	w := r.nextWatch(ctx)

	if _, err := r.m.GetSecret(ctx, ns, "ca"); err != nil {
		t.Fatal(err)
	}
	w.waitStopped(t, ctx)
	if r.secretItem("ca").watching {
		t.Error("item still marked watching")
	}

	if err := r.client.CoreV1().Secrets(ns).Delete(ctx, "ca", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s, err := r.m.GetSecret(ctx, ns, "ca")
		if err != nil || string(s.Data["key"]) != "v1" {
			t.Fatalf("GetSecret after the watch stopped = %v, %v; want the last version", s, err)
		}
	}
	r.wantRequests("immutable", "secrets", 0, 1, 1)
}

// Pins the watch path end to end through the fake clientset's tracker: an update of a watched
// ConfigMap reaches a later GetConfigMap without any GET.
func TestWatchServesUpdates(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyWatch}, configMap("app", "v1"), configMap("other", "x"))
	r.m.RegisterPod(podWith("web", "uid-1", nil, []string{"app"}))
	r.nextWatch(ctx) // updates made before the WATCH opens would be lost by the fake tracker

	if c, err := r.m.GetConfigMap(ctx, ns, "app"); err != nil || c.Data["key"] != "v1" {
		t.Fatalf("GetConfigMap = %v, %v", c, err)
	}
	if _, err := r.client.CoreV1().ConfigMaps(ns).Update(ctx, configMap("app", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The fake ignores the field selector, so "other" also reaches the reflector; the slot must
	// ignore it.
	if _, err := r.client.CoreV1().ConfigMaps(ns).Update(ctx, configMap("other", "y"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The event travels tracker → reflector → slot on another goroutine: poll for it.
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		c, err := r.m.GetConfigMap(ctx, ns, "app")
		return err == nil && c.Data["key"] == "v2", err
	})
	if err != nil {
		t.Fatalf("the update never reached GetConfigMap: %v", err)
	}
	if c, _ := r.m.GetConfigMap(ctx, ns, "app"); c.Name != "app" {
		t.Errorf("the slot holds %q, want app", c.Name)
	}
	r.wantRequests("update served", "configmaps", 0, 1, 1)
}

// Pins the errors of objectCache.Get: not registered, NotFound once synced, and a sync failure
// when the first LIST has not landed.
func TestWatchGetErrors(t *testing.T) {
	t.Run("not registered", func(t *testing.T) {
		_, ctx := ktesting.NewTestContext(t)
		r := newRig(t, Config{}, secret("db", "v1"))
		_, err := r.m.GetSecret(ctx, ns, "db")
		if err == nil || err.Error() != `secret "team-a/db" not registered: no registered pod references it (call RegisterPod with the pod first)` {
			t.Errorf("err = %v", err)
		}
		r.wantRequests("unregistered", "secrets", 0, 0, 0)
	})
	t.Run("NotFound once synced", func(t *testing.T) {
		_, ctx := ktesting.NewTestContext(t)
		r := newRig(t, Config{})
		r.m.RegisterPod(podWith("web", "uid-1", nil, []string{"missing"}))
		_, err := r.m.GetConfigMap(ctx, ns, "missing")
		if !apierrors.IsNotFound(err) {
			t.Errorf("err = %v, want NotFound", err)
		}
	})
	t.Run("not synced", func(t *testing.T) {
		_, ctx := ktesting.NewTestContext(t)
		r := newRig(t, Config{})
		r.client.PrependReactor("list", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(corev1.Resource("secrets"), "", nil)
		})
		r.m.RegisterPod(podWith("web", "uid-1", []string{"db"}, nil))
		ctx, cancel := context.WithCancel(ctx)
		cancel() // the caller gives up at once; the fake clock never fires the 5 s timer
		_, err := r.m.GetSecret(ctx, ns, "db")
		if err == nil || !strings.Contains(err.Error(), `failed to sync secret cache for "team-a/db"`) {
			t.Errorf("err = %v, want a sync failure", err)
		}
	})
}

// Pins cacheBasedManager.RegisterPod with a previous version: the same pod (same UID) with a
// changed spec moves its reference from the old name to the new one.
func TestWatchRegisterMovesReferences(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{}, secret("old", "v1"), secret("new", "v1"))
	r.m.RegisterPod(podWith("web", "uid-1", []string{"old"}, nil))
	oldWatch := r.nextWatch(ctx)
	r.m.RegisterPod(podWith("web", "uid-1", []string{"new"}, nil))
	r.nextWatch(ctx)

	if _, err := r.m.GetSecret(ctx, ns, "old"); err == nil {
		t.Error("old is still registered after the pod stopped referencing it")
	}
	if _, err := r.m.GetSecret(ctx, ns, "new"); err != nil {
		t.Errorf("new: %v", err)
	}
	r.clock.Step(idleTimeout(defaultResync))
	oldWatch.waitStopped(t, ctx)
	if r.secretItem("new") == nil {
		t.Error("the watch of new was dropped")
	}
	r.wantRequests("moved", "secrets", 0, 2, 2)
}

package secretmanager

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"
)

// Pins objectStore.Get of cache_based_manager.go: one GET, then served from memory while younger
// than the TTL; a second GET once the TTL has passed on the clock.
func TestCacheTTL(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyCache, TTL: time.Minute}, secret("db", "v1"))
	r.m.RegisterPod(podWith("web", "uid-1", []string{"db"}, nil))
	r.wantRequests("after RegisterPod", "secrets", 0, 0, 0) // register never talks to the server

	get := func(step, want string) {
		t.Helper()
		s, err := r.m.GetSecret(ctx, ns, "db")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := string(s.Data["key"]); got != want {
			t.Errorf("%s: value %q, want %q", step, got, want)
		}
	}
	get("first Get", "v1")
	get("second Get", "v1")
	r.wantRequests("two Gets within the TTL", "secrets", 1, 0, 0)

	// A change on the server is not seen until the TTL passes: that is the staleness bought.
	if _, err := r.client.CoreV1().Secrets(ns).Update(ctx, secret("db", "v2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.clock.Step(time.Minute - time.Second)
	get("59s later", "v1")
	r.wantRequests("59s later", "secrets", 1, 0, 0)

	r.clock.Step(time.Second)
	get("60s later", "v2")
	r.wantRequests("TTL expired", "secrets", 2, 0, 0)
	get("right after the refresh", "v2")
	r.wantRequests("fresh again", "secrets", 2, 0, 0)
}

// Pins AddReference ("This will trigger fetch on the next Get() operation") and the
// cacheBasedManager.RegisterPod rule: "only invoke AddReference the first time RegisterPod is
// called for a pod" — a new pod invalidates, a re-registered pod only for names it adds.
func TestCacheRegisterInvalidates(t *testing.T) {
	tests := []struct {
		name string
		// then runs after the first pod registered and read "db" once (1 GET).
		then     func(r *rig)
		wantGets int
	}{
		{
			name:     "a second pod referencing the object invalidates it",
			then:     func(r *rig) { r.m.RegisterPod(podWith("api", "uid-2", []string{"db"}, nil)) },
			wantGets: 2,
		},
		{
			name: "a pod deleted and re-created (new UID) invalidates it",
			then: func(r *rig) {
				r.m.UnregisterPod(podWith("web", "uid-1", nil, nil))
				r.m.RegisterPod(podWith("web", "uid-3", []string{"db"}, nil))
			},
			wantGets: 2,
		},
		{
			name:     "the same pod re-registered unchanged does not",
			then:     func(r *rig) { r.m.RegisterPod(podWith("web", "uid-1", []string{"db"}, nil)) },
			wantGets: 1,
		},
		{
			name:     "the same pod adding another secret does not invalidate the one it kept",
			then:     func(r *rig) { r.m.RegisterPod(podWith("web", "uid-1", []string{"db", "tls"}, nil)) },
			wantGets: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			r := newRig(t, Config{Strategy: StrategyCache, TTL: time.Hour}, secret("db", "v1"), secret("tls", "v1"))
			r.m.RegisterPod(podWith("web", "uid-1", []string{"db"}, nil))
			if _, err := r.m.GetSecret(ctx, ns, "db"); err != nil {
				t.Fatal(err)
			}
			tc.then(r)
			r.wantRequests("after the change", "secrets", 1, 0, 0) // Register never fetches
			if _, err := r.m.GetSecret(ctx, ns, "db"); err != nil {
				t.Fatal(err)
			}
			r.wantRequests("after the next Get", "secrets", tc.wantGets, 0, 0)
		})
	}
}

// Pins DeleteReference (entry dropped with its last pod), the "not registered" error, and
// NotFound handling: a NotFound is returned, and the next Get asks again.
func TestCacheRefCountsAndErrors(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyCache, TTL: time.Hour}, secret("db", "v1"))

	if _, err := r.m.GetSecret(ctx, ns, "db"); err == nil || !strings.Contains(err.Error(), `secret "team-a/db" not registered`) {
		t.Errorf("Get before any RegisterPod: %v, want a not-registered error", err)
	}
	r.wantRequests("unregistered Get", "secrets", 0, 0, 0)

	web, api := podWith("web", "uid-1", []string{"db", "late"}, nil), podWith("api", "uid-2", []string{"db"}, nil)
	r.m.RegisterPod(web)
	r.m.RegisterPod(api)
	r.m.UnregisterPod(web)
	r.m.UnregisterPod(web) // twice: the count must not go below api's reference
	if _, err := r.m.GetSecret(ctx, ns, "db"); err != nil {
		t.Errorf("api still references db: %v", err)
	}
	r.m.UnregisterPod(api)
	if _, err := r.m.GetSecret(ctx, ns, "db"); err == nil {
		t.Error("Get after the last pod unregistered succeeded; the entry should be dropped")
	}
	if n := len(r.m.(*manager).secrets.(*cacheStore[*corev1.Secret]).items); n != 0 {
		t.Errorf("%d cache entries left after every pod unregistered", n)
	}

	// NotFound, then the object appears: the next Get sees it without waiting for the TTL.
	r.m.RegisterPod(podWith("web", "uid-1", []string{"late"}, nil))
	if _, err := r.m.GetSecret(ctx, ns, "late"); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing secret: %v, want NotFound", err)
	}
	if _, err := r.client.CoreV1().Secrets(ns).Create(ctx, secret("late", "v1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.GetSecret(ctx, ns, "late"); err != nil {
		t.Errorf("Get after the secret was created: %v", err)
	}
	r.wantRequests("at the end", "secrets", 3, 0, 0)
}

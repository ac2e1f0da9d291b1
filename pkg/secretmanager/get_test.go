package secretmanager

import (
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Pins simpleSecretManager / simpleConfigMapManager: one GET per call, nothing cached, and
// Register/Unregister send nothing.
func TestGetStrategy(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	r := newRig(t, Config{Strategy: StrategyGet}, secret("db", "v1"), configMap("app", "v1"))
	pod := podWith("web", "uid-1", []string{"db"}, []string{"app"})

	r.m.RegisterPod(pod)
	r.wantRequests("after RegisterPod", "secrets", 0, 0, 0)

	for i := range 3 {
		s, err := r.m.GetSecret(ctx, ns, "db")
		if err != nil || string(s.Data["key"]) != "v1" {
			t.Fatalf("GetSecret #%d = %v, %v", i+1, s, err)
		}
	}
	r.wantRequests("after 3 GetSecret", "secrets", 3, 0, 0)

	if _, err := r.m.GetConfigMap(ctx, ns, "app"); err != nil {
		t.Fatal(err)
	}
	r.wantRequests("after 1 GetConfigMap", "configmaps", 1, 0, 0)

	// Unregistered objects are fetched too: the Get strategy keeps no registry.
	if _, err := r.m.GetSecret(ctx, ns, "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("GetSecret of a missing secret: %v, want NotFound", err)
	}
	r.m.UnregisterPod(pod)
	r.wantRequests("at the end", "secrets", 4, 0, 0)
}

// The journal shows what each strategy costs: a GET per Get, a GET then cache hits, or one
// WATCH then cache hits — each naming the object.
func TestJournalRecordsRequestsAndCacheHits(t *testing.T) {
	tests := []struct {
		strategy Strategy
		want     []string
	}{
		{StrategyGet, []string{"get", "get"}},
		{StrategyCache, []string{"get", "cache hit"}},
		{StrategyWatch, []string{"watch", "cache hit", "cache hit"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.strategy), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			j := journal.NewWithClock(16, clock.RealClock{})
			r := newRig(t, Config{Strategy: tt.strategy, Journal: j.For(journal.SourceSecrets)}, secret("db", "v1"))
			r.m.RegisterPod(podWith("web", "uid-1", []string{"db"}, nil))
			if tt.strategy == StrategyWatch {
				r.nextWatch(ctx)
			}
			for range 2 {
				if _, err := r.m.GetSecret(ctx, ns, "db"); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, e := range j.Read(0, journal.Filter{}).Events {
				if e.Source != journal.SourceSecrets || e.Fields["kind"] != "secret" || e.Fields["object"] != ns+"/db" {
					t.Errorf("event %+v: want source secrets, kind secret, object %s/db", e, ns)
				}
				got = append(got, e.Kind)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("journal kinds %v, want %v", got, tt.want)
			}
		})
	}
}

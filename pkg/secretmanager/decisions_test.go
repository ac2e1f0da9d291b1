package secretmanager

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes/fake"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Pins the values of KubeletConfiguration configMapAndSecretChangeDetectionStrategy.
func TestStrategyValuesMatchKubeletConfiguration(t *testing.T) {
	tests := []struct {
		ours     Strategy
		upstream kubeletconfigv1beta1.ResourceChangeDetectionStrategy
	}{
		{StrategyGet, kubeletconfigv1beta1.GetChangeDetectionStrategy},
		{StrategyCache, kubeletconfigv1beta1.TTLCacheChangeDetectionStrategy},
		{StrategyWatch, kubeletconfigv1beta1.WatchChangeDetectionStrategy},
	}
	for _, tc := range tests {
		t.Run(string(tc.ours), func(t *testing.T) {
			if string(tc.ours) != string(tc.upstream) {
				t.Errorf("strategy %q, KubeletConfiguration says %q", tc.ours, tc.upstream)
			}
		})
	}
}

func TestNewDefaultsAndValidation(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
		want    Strategy
	}{
		{name: "no client", cfg: Config{}, wantErr: true},
		{name: "default strategy is Watch, as the kubelet's", cfg: Config{Client: fake.NewClientset()}, want: StrategyWatch},
		{name: "Get", cfg: Config{Client: fake.NewClientset(), Strategy: StrategyGet}, want: StrategyGet},
		{name: "Cache", cfg: Config{Client: fake.NewClientset(), Strategy: StrategyCache}, want: StrategyCache},
		{name: "unknown strategy", cfg: Config{Client: fake.NewClientset(), Strategy: "Poll"}, wantErr: true},
		{name: "negative TTL", cfg: Config{Client: fake.NewClientset(), TTL: -time.Second}, wantErr: true},
		{name: "negative Resync", cfg: Config{Client: fake.NewClientset(), Resync: -time.Second}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.cfg)
			if (err != nil) != tc.wantErr {
				t.Fatalf("New error = %v, want error: %v", err, tc.wantErr)
			}
			if err == nil && m.(*manager).strategy != tc.want {
				t.Errorf("strategy = %q, want %q", m.(*manager).strategy, tc.want)
			}
		})
	}
}

// Pins cacheBasedManager.RegisterPod: the first registration adds every name; a re-registration
// moves only the difference.
func TestReferenceChanges(t *testing.T) {
	tests := []struct {
		name           string
		prev, next     sets.Set[string]
		wantAdd, wantD []string
	}{
		{name: "first registration adds all", prev: nil, next: sets.New("a", "b"), wantAdd: []string{"a", "b"}},
		{name: "unchanged spec moves nothing", prev: sets.New("a", "b"), next: sets.New("a", "b")},
		{name: "renamed secret moves", prev: sets.New("a", "old"), next: sets.New("a", "new"), wantAdd: []string{"new"}, wantD: []string{"old"}},
		{name: "all references removed", prev: sets.New("a"), next: sets.New[string](), wantD: []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			add, drop := referenceChanges(tc.prev, tc.next)
			if !add.Equal(sets.New(tc.wantAdd...)) || !drop.Equal(sets.New(tc.wantD...)) {
				t.Errorf("referenceChanges = add %v drop %v, want add %v drop %v", sets.List(add), sets.List(drop), tc.wantAdd, tc.wantD)
			}
		})
	}
}

// Pins isObjectFresh (strictly younger than the TTL), isObjectOlder (integer resourceVersions)
// and GetObjectTTLFromNodeFunc (the node.alpha.kubernetes.io/ttl annotation in whole seconds).
func TestCacheDecisions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t.Run("isFresh", func(t *testing.T) {
		tests := []struct {
			age  time.Duration
			ttl  time.Duration
			want bool
		}{
			{0, time.Minute, true},
			{59 * time.Second, time.Minute, true},
			{time.Minute, time.Minute, false},
			{0, 0, false}, // TTL 0: every Get fetches
		}
		for _, tc := range tests {
			if got := isFresh(t0, t0.Add(tc.age), tc.ttl); got != tc.want {
				t.Errorf("isFresh(age %s, ttl %s) = %v, want %v", tc.age, tc.ttl, got, tc.want)
			}
		}
	})
	t.Run("isOlder", func(t *testing.T) {
		rv := func(v string) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: v}}
		}
		tests := []struct {
			candidate, current string
			want               bool
		}{
			{"9", "10", true}, // integers, not strings: "9" > "10" lexically
			{"10", "10", false},
			{"11", "10", false},
			{"", "10", false},
			{"abc", "10", false},
		}
		for _, tc := range tests {
			if got := isOlder(rv(tc.candidate), rv(tc.current)); got != tc.want {
				t.Errorf("isOlder(%q, %q) = %v, want %v", tc.candidate, tc.current, got, tc.want)
			}
		}
	})
}

// Pins NewWatchBasedManager's maxIdleTime = 5 × resync, floored at minIdleTime (1 min), and the
// idle timer's guard.
func TestWatchDecisions(t *testing.T) {
	idle := []struct{ resync, want time.Duration }{
		{time.Minute, 5 * time.Minute},
		{10 * time.Second, time.Minute}, // 50 s is below the 1 min floor
		{0, time.Minute},
	}
	for _, tc := range idle {
		if got := idleTimeout(tc.resync); got != tc.want {
			t.Errorf("idleTimeout(%s) = %s, want %s", tc.resync, got, tc.want)
		}
	}
	still := []struct {
		name              string
		refs              int
		current, armedGen uint64
		want              bool
	}{
		{"unreferenced since the timer was armed", 0, 3, 3, true},
		{"referenced again", 1, 4, 3, false},
		{"referenced and released again: a newer timer owns it", 0, 5, 3, false},
	}
	for _, tc := range still {
		if got := stillIdle(tc.refs, tc.current, tc.armedGen); got != tc.want {
			t.Errorf("%s: stillIdle = %v, want %v", tc.name, got, tc.want)
		}
	}
}

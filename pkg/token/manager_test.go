package token

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var start = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// tokenServer is a fake TokenRequest API on client-go's fake clientset: every CreateToken gets
// "token-<n>", valid for the requested expirationSeconds (3600 when unset, the API default) from
// the fake clock's now. fail makes the next requests fail.
type tokenServer struct {
	client *fake.Clientset
	clock  *testingclock.FakeClock
	issued int
	fail   bool
	// notYetSeen answers this many requests with NotFound, as for a pod just created.
	notYetSeen int
}

func newTokenServer() *tokenServer {
	s := &tokenServer{client: fake.NewClientset(), clock: testingclock.NewFakeClock(start)}
	s.client.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "token" {
			return false, nil, nil
		}
		if s.fail {
			return true, nil, errors.New("connection refused")
		}
		if s.notYetSeen > 0 { // the API server's cache has not seen the bound pod yet
			s.notYetSeen--
			return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web")
		}
		tr := action.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		if tr.Spec.ExpirationSeconds == nil {
			tr.Spec.ExpirationSeconds = ptr.To[int64](3600)
		}
		s.issued++
		tr.Status = authenticationv1.TokenRequestStatus{
			Token:               fmt.Sprintf("token-%d", s.issued),
			ExpirationTimestamp: metav1.NewTime(s.clock.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)),
		}
		return true, tr, nil
	})
	return s
}

// requests returns the TokenRequests the manager sent, with the service account each was for.
func (s *tokenServer) requests() (sa []string, trs []*authenticationv1.TokenRequest) {
	for _, a := range s.client.Actions() {
		if a.GetVerb() == "create" && a.GetSubresource() == "token" {
			sa = append(sa, a.GetNamespace()+"/"+a.(k8stesting.CreateActionImpl).Name)
			trs = append(trs, a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest))
		}
	}
	return sa, trs
}

// podRequest is what the volume projector sends for a pod's serviceAccountToken source.
func podRequest(pod string, uid types.UID, audience string, expirationSeconds *int64) *authenticationv1.TokenRequest {
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: expirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod, UID: uid},
	}}
	if audience != "" {
		tr.Spec.Audiences = []string{audience}
	}
	return tr
}

func newManager(t *testing.T, s *tokenServer) *Manager {
	t.Helper()
	m, err := New(Config{Client: s.client, Clock: s.clock})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Upstream requiresRefresh: a token older than 80 % of its TTL, or older than 24 h, is due.
func TestRequiresRefresh(t *testing.T) {
	issued := func(ttl int64) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{
			Spec:   authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(ttl)},
			Status: authenticationv1.TokenRequestStatus{ExpirationTimestamp: metav1.NewTime(start.Add(time.Duration(ttl) * time.Second))},
		}
	}
	noTTL := issued(600)
	noTTL.Spec.ExpirationSeconds = nil
	tests := []struct {
		name string
		tr   *authenticationv1.TokenRequest
		age  time.Duration
		want bool
	}{
		{"kube-api-access (3607 s): fresh", issued(3607), 0, false},
		{"kube-api-access (3607 s): at 80 % exactly", issued(3607), 3607 * time.Second * 8 / 10, false},
		{"kube-api-access (3607 s): just past 80 %", issued(3607), 3607*time.Second*8/10 + time.Millisecond, true},
		{"600 s: 479 s old", issued(600), 479 * time.Second, false},
		{"600 s: 481 s old", issued(600), 481 * time.Second, true},
		{"48 h: 23 h old, below 80 % and 24 h", issued(48 * 3600), 23 * time.Hour, false},
		{"48 h: older than 24 h though below 80 %", issued(48 * 3600), 24*time.Hour + time.Second, true},
		{"no expirationSeconds: valid", noTTL, 599 * time.Second, false},
		{"no expirationSeconds: expired", noTTL, 600 * time.Second, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := requiresRefresh(tc.tr, start.Add(tc.age)); got != tc.want {
				t.Errorf("requiresRefresh at age %s = %v, want %v", tc.age, got, tc.want)
			}
		})
	}
}

// The kubelet's token manager: the request goes to the TokenRequest API as sent (bound to the
// pod, audience and expirationSeconds kept), the token is cached, and it is requested again only
// after 80 % of its TTL.
func TestGetServiceAccountTokenCachesAndRefreshes(t *testing.T) {
	// Each step advances the fake clock, asks for the token of pod "web", and checks which token
	// comes back and how many requests the API server has seen in total.
	type step struct {
		advance      time.Duration
		wantToken    string
		wantRequests int
	}
	tests := []struct {
		name     string
		audience string
		exp      *int64
		steps    []step
	}{
		{
			name: "kube-api-access volume: 3607 s, refreshed after 2885.6 s",
			exp:  ptr.To[int64](3607),
			steps: []step{
				{0, "token-1", 1},
				{time.Minute, "token-1", 1},
				{2885*time.Second - time.Minute, "token-1", 1}, // 2885 s: 80 % not reached
				{time.Second, "token-2", 2},                    // 2886 s: refreshed
				{2885 * time.Second, "token-2", 2},             // the new token has its own 80 %
				{time.Second, "token-3", 3},
			},
		},
		{
			name:     "audience and the API minimum of 600 s: refreshed after 480 s",
			audience: "vault",
			exp:      ptr.To[int64](600),
			steps:    []step{{0, "token-1", 1}, {480 * time.Second, "token-1", 1}, {time.Second, "token-2", 2}},
		},
		{
			name:  "no expirationSeconds: the API default (3600 s) is the TTL",
			steps: []step{{0, "token-1", 1}, {2880 * time.Second, "token-1", 1}, {time.Second, "token-2", 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			s := newTokenServer()
			m := newManager(t, s)
			for i, st := range tc.steps {
				s.clock.Step(st.advance)
				got, err := m.GetServiceAccountToken(ctx, "shop", "default", podRequest("web", "uid-1", tc.audience, tc.exp))
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got.Status.Token != st.wantToken {
					t.Errorf("step %d (+%s): token %q, want %q", i, st.advance, got.Status.Token, st.wantToken)
				}
				if sas, _ := s.requests(); len(sas) != st.wantRequests {
					t.Errorf("step %d (+%s): %d TokenRequests, want %d", i, st.advance, len(sas), st.wantRequests)
				}
			}
			sas, trs := s.requests()
			for i, tr := range trs {
				if sas[i] != "shop/default" {
					t.Errorf("request %d for service account %s, want shop/default", i, sas[i])
				}
				want := podRequest("web", "uid-1", tc.audience, tc.exp).Spec
				if ref := tr.Spec.BoundObjectRef; ref == nil || *ref != *want.BoundObjectRef {
					t.Errorf("request %d bound to %+v, want %+v", i, ref, want.BoundObjectRef)
				}
				if strings.Join(tr.Spec.Audiences, ",") != tc.audience {
					t.Errorf("request %d audiences %q, want %q", i, tr.Spec.Audiences, tc.audience)
				}
				if !ptr.Equal(tr.Spec.ExpirationSeconds, tc.exp) {
					t.Errorf("request %d expirationSeconds %v, want %v", i, ptr.Deref(tr.Spec.ExpirationSeconds, 0), ptr.Deref(tc.exp, 0))
				}
			}
		})
	}
}

// The cache key: another pod, another audience or another lifetime is another token; the same
// request is one token.
func TestGetServiceAccountTokenKeys(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	s := newTokenServer()
	m := newManager(t, s)
	reqs := []struct {
		sa  string
		tr  *authenticationv1.TokenRequest
		new bool
	}{
		{"default", podRequest("web", "uid-1", "", ptr.To[int64](3607)), true},
		{"default", podRequest("web", "uid-1", "", ptr.To[int64](3607)), false},
		{"default", podRequest("web", "uid-1", "vault", ptr.To[int64](3607)), true},
		{"default", podRequest("web", "uid-1", "", ptr.To[int64](600)), true},
		{"default", podRequest("web", "uid-2", "", ptr.To[int64](3607)), true}, // re-created pod
		{"builder", podRequest("web", "uid-1", "", ptr.To[int64](3607)), true},
	}
	want := 0
	for i, r := range reqs {
		if _, err := m.GetServiceAccountToken(ctx, "shop", r.sa, r.tr); err != nil {
			t.Fatal(err)
		}
		if r.new {
			want++
		}
		if sas, _ := s.requests(); len(sas) != want {
			t.Errorf("request %d: %d TokenRequests, want %d", i, len(sas), want)
		}
	}
	if n := cachedTokens(m); n != 5 {
		t.Errorf("%d cached tokens, want 5", n)
	}
}

// Upstream: a failed refresh keeps the cached token while it is valid; once it has expired the
// error is returned. No token appears in the error.
func TestGetServiceAccountTokenRefreshFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	s := newTokenServer()
	m := newManager(t, s)
	req := podRequest("web", "uid-1", "", ptr.To[int64](600))
	if _, err := m.GetServiceAccountToken(ctx, "shop", "default", req); err != nil {
		t.Fatal(err)
	}
	s.fail = true
	s.clock.Step(500 * time.Second) // due for refresh, still valid
	got, err := m.GetServiceAccountToken(ctx, "shop", "default", req)
	if err != nil || got.Status.Token != "token-1" {
		t.Fatalf("refresh failed before expiry: got %v, %v; want the cached token-1", got, err)
	}
	s.clock.Step(100 * time.Second) // expired
	if _, err := m.GetServiceAccountToken(ctx, "shop", "default", req); err == nil || strings.Contains(err.Error(), "token-1") {
		t.Errorf("refresh failed after expiry: err = %v, want an error without the token", err)
	}
	if _, err := m.GetServiceAccountToken(ctx, "shop", "other", req); err == nil {
		t.Error("a first request that fails must return its error")
	}
}

// A pod created a moment ago may not be in the API server's cache yet ("pod not found"): the
// request is retried within seconds on the clock (upstream's volume manager retries a mount
// every 500 ms), not left to the pod worker's 10 s back-off; a pod that stays unknown fails.
func TestGetServiceAccountTokenWaitsForANewPod(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	s := newTokenServer()
	s.notYetSeen = 2
	m := newManager(t, s)
	got := make(chan error, 1)
	go func() {
		_, err := m.GetServiceAccountToken(ctx, "shop", "default", podRequest("web", "uid-1", "", nil))
		got <- err
	}()
	for _, wait := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond} {
		for !s.clock.HasWaiters() {
			goruntime.Gosched()
		}
		s.clock.Step(wait)
	}
	if err := <-got; err != nil {
		t.Fatalf("after two not-found answers: %v", err)
	}
	if sa, _ := s.requests(); len(sa) != 3 {
		t.Errorf("%d requests, want 3", len(sa))
	}

	s.notYetSeen = 100
	go func() {
		_, err := m.GetServiceAccountToken(ctx, "shop", "default", podRequest("gone", "uid-2", "", nil))
		got <- err
	}()
	for range notFoundRetries {
		for !s.clock.HasWaiters() {
			goruntime.Gosched()
		}
		s.clock.Step(2 * time.Second)
	}
	if err := <-got; !apierrors.IsNotFound(err) {
		t.Errorf("a pod that stays unknown: err = %v, want NotFound", err)
	}
}

// Upstream DeleteServiceAccountToken (volume teardown), done by housekeeping's CleanupPods, and
// the cleanup of expired tokens: a gone pod's tokens are forgotten at once, a kept pod's once they
// have expired.
func TestCleanup(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	s := newTokenServer()
	m := newManager(t, s)
	for _, r := range []*authenticationv1.TokenRequest{
		podRequest("web", "uid-1", "", ptr.To[int64](3607)),
		podRequest("web", "uid-1", "vault", ptr.To[int64](600)),
		podRequest("db", "uid-2", "", ptr.To[int64](3607)),
		podRequest("old", "uid-3", "", ptr.To[int64](3607)),
	} {
		if _, err := m.GetServiceAccountToken(ctx, "shop", "default", r); err != nil {
			t.Fatal(err)
		}
	}
	m.CleanupPods(map[types.UID]bool{"uid-1": true, "uid-3": true})
	if n := cachedTokens(m); n != 3 {
		t.Errorf("after CleanupPods(keep uid-1, uid-3): %d cached tokens, want 3", n)
	}
	s.clock.Step(600 * time.Second) // web's vault token expires
	m.CleanupPods(map[types.UID]bool{"uid-1": true})
	if n := cachedTokens(m); n != 1 {
		t.Errorf("after CleanupPods(keep uid-1) with one expired: %d cached tokens, want 1", n)
	}
	if _, err := m.GetServiceAccountToken(ctx, "shop", "default", podRequest("web", "uid-1", "", ptr.To[int64](3607))); err != nil {
		t.Fatal(err)
	}
	if sas, _ := s.requests(); len(sas) != 4 {
		t.Errorf("%d TokenRequests, want 4: the kept, valid token is still cached", len(sas))
	}
}

// cachedTokens is the number of tokens m holds.
func cachedTokens(m *Manager) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cache)
}

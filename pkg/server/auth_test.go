package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Pins upstream GetRequestAttributes (pkg/kubelet/server/auth.go, v1.36 with
// KubeletFineGrainedAuthz GA): which nodes/<subresource> a kubelet API path needs.
func TestRequestAttributes(t *testing.T) {
	tests := []struct {
		method, path     string
		wantVerb         string
		wantSubresources []string
	}{
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/pods/", "get", []string{"pods", "proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/healthz/syncloop", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/cadvisor", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}}, // what metrics-server scrapes
		{"POST", "/stats/summary", "create", []string{"stats"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"POST", "/checkpoint/default/web/app", "create", []string{"checkpoint"}},
		{"GET", "/statusz", "get", []string{"statusz"}},
		{"GET", "/flagz", "get", []string{"configz"}},
		{"GET", "/spec/", "get", []string{"proxy"}}, // no /spec subresource in v1.36
		{"POST", "/exec/default/web/app", "create", []string{"proxy"}},
		{"GET", "/exec/default/web/app", "get", []string{"proxy"}},
		{"POST", "/attach/default/web/uid-1/app", "create", []string{"proxy"}},
		{"POST", "/portForward/default/web", "create", []string{"proxy"}},
		{"POST", "/run/default/web/app", "create", []string{"proxy"}},
		{"GET", "/containerLogs/default/web/app", "get", []string{"proxy"}},
		{"GET", "/debug/pprof/", "get", []string{"proxy"}},
		{"GET", "/debug/journal", "get", []string{"proxy"}}, // minikubelet's journal, like upstream's /debug paths
		{"GET", "/debug/journal/ui", "get", []string{"proxy"}},
		{"PUT", "/statsfoo", "update", []string{"proxy"}}, // a prefix is not a subpath
		{"PATCH", "/metricsfoo", "patch", []string{"proxy"}},
		{"DELETE", "/podsx", "delete", []string{"proxy"}},
		{"HEAD", "/pods", "", []string{"pods", "proxy"}}, // no API verb for HEAD, as upstream
	}
	u := &user.DefaultInfo{Name: "bob"}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.path, nil)
			attrs := requestAttributes(u, r, testNode)
			var got []string
			for _, a := range attrs {
				got = append(got, a.GetSubresource())
				if a.GetVerb() != tc.wantVerb || a.GetResource() != "nodes" || a.GetName() != testNode ||
					a.GetAPIVersion() != "v1" || a.GetAPIGroup() != "" || a.GetNamespace() != "" ||
					!a.IsResourceRequest() || a.GetPath() != tc.path || a.GetUser().GetName() != "bob" {
					t.Errorf("attributes = %+v, want verb %q on nodes/%s for bob", a, tc.wantVerb, testNode)
				}
			}
			if !reflect.DeepEqual(got, tc.wantSubresources) {
				t.Errorf("subresources = %v, want %v", got, tc.wantSubresources)
			}
		})
	}
}

// authTestEnv is a running server (over real TLS, as Run serves it) with x509 authentication
// against a test CA, and TokenReview and SubjectAccessReview answered by a fake API server:
//   - token "alice-token" is user alice; alice may do anything (nodes/proxy);
//   - carol may only get nodes/pods (fine-grained);
//   - bob may do nothing.
type authTestEnv struct {
	url   string
	ca    *testCA
	roots *x509.CertPool
	api   *fakeReviewAPI
}

func startAuthTestEnv(t *testing.T) *authTestEnv {
	t.Helper()
	env := &authTestEnv{ca: newTestCA(t, "test-client-ca")}
	var client kubernetes.Interface
	env.api, client = newFakeReviewAPI(t,
		func(token string) *authenticationv1.UserInfo {
			if token == "alice-token" {
				return &authenticationv1.UserInfo{Username: "alice"}
			}
			return nil
		},
		func(spec authorizationv1.SubjectAccessReviewSpec) bool {
			ra := spec.ResourceAttributes
			switch {
			case spec.User == "alice" && ra.Resource == "nodes" && ra.Subresource == "proxy":
				return true
			case spec.User == "carol" && ra.Resource == "nodes" && ra.Subresource == "pods" && ra.Verb == "get":
				return true
			}
			return false
		})

	dir := t.TempDir()
	caFile := filepath.Join(dir, "client-ca.crt")
	if err := os.WriteFile(caFile, env.ca.certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{
		NodeName:     testNode,
		CertDir:      filepath.Join(dir, "pki"),
		NodeIPs:      []net.IP{net.ParseIP("127.0.0.1")},
		ClientCAFile: caFile,
		WebhookAuthn: true,
		WebhookAuthz: true,
		Client:       client,
		Host:         &fakeHost{pods: []*corev1.Pod{testPod()}},
		Streaming:    &fakeStreaming{},
		Journal:      testJournal(),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}

	// Trust the self-signed serving certificate (the file also holds its generated CA).
	servingPEM, err := os.ReadFile(filepath.Join(dir, "pki", "kubelet.crt"))
	if err != nil {
		t.Fatal(err)
	}
	env.roots = x509.NewCertPool()
	if !env.roots.AppendCertsFromPEM(servingPEM) {
		t.Fatal("no certificate in kubelet.crt")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env.url = "https://" + ln.Addr().String()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v after a clean stop, want nil", err)
		}
	})
	return env
}

// client returns an HTTPS client that trusts the server and presents certs.
func (env *authTestEnv) client(t *testing.T, certs ...tls.Certificate) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: env.roots, Certificates: certs, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (env *authTestEnv) get(t *testing.T, c *http.Client, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, env.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	return resp.StatusCode, mustReadAll(t, resp.Body)
}

// Pins the kubelet's authentication filter (upstream InstallAuthFilter): 401 without valid
// credentials, 403 with upstream's message when SubjectAccessReview denies, the handler when
// any of the request's attributes is allowed.
func TestAuthenticationAndAuthorization(t *testing.T) {
	env := startAuthTestEnv(t)
	otherCA := newTestCA(t, "some-other-ca")

	t.Run("no credentials is 401", func(t *testing.T) {
		code, body := env.get(t, env.client(t), "/pods", "")
		if code != http.StatusUnauthorized || strings.TrimSpace(body) != "Unauthorized" {
			t.Errorf("got %d %q, want 401 Unauthorized", code, body)
		}
	})

	t.Run("a certificate from another CA is 401", func(t *testing.T) {
		code, _ := env.get(t, env.client(t, otherCA.clientCert(t, "carol")), "/pods", "")
		if code != http.StatusUnauthorized {
			t.Errorf("got %d, want 401", code)
		}
	})

	t.Run("an unknown token is 401", func(t *testing.T) {
		code, _ := env.get(t, env.client(t), "/pods", "mallory-token")
		if code != http.StatusUnauthorized {
			t.Errorf("got %d, want 401", code)
		}
	})

	t.Run("a valid certificate denied by SubjectAccessReview is 403", func(t *testing.T) {
		code, body := env.get(t, env.client(t, env.ca.clientCert(t, "bob", "devs")), "/pods", "")
		want := "Forbidden (user=bob, verb=get, resource=nodes, subresource(s)=[pods proxy])"
		if code != http.StatusForbidden || strings.TrimSpace(body) != want {
			t.Errorf("got %d %q, want 403 %q", code, body, want)
		}
		var bobs []string
		for _, sar := range env.api.sentSARs() {
			if sar.User != "bob" {
				continue
			}
			ra := sar.ResourceAttributes
			if ra.Verb != "get" || ra.Resource != "nodes" || ra.Name != testNode || ra.Version != "v1" {
				t.Errorf("SubjectAccessReview for bob asks %+v, want get nodes/%s", ra, testNode)
			}
			if !reflect.DeepEqual(sar.Groups, []string{"devs", user.AllAuthenticated}) {
				t.Errorf("SubjectAccessReview groups = %v, want the certificate's O plus %s", sar.Groups, user.AllAuthenticated)
			}
			bobs = append(bobs, ra.Subresource)
		}
		if !reflect.DeepEqual(bobs, []string{"pods", "proxy"}) {
			t.Errorf("bob's SubjectAccessReviews asked subresources %v, want [pods proxy]", bobs)
		}
	})

	t.Run("a valid certificate allowed nodes/pods lists the pods", func(t *testing.T) {
		code, body := env.get(t, env.client(t, env.ca.clientCert(t, "carol")), "/pods", "")
		if code != http.StatusOK {
			t.Fatalf("got %d %q, want 200", code, body)
		}
		var list corev1.PodList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("decode PodList: %v", err)
		}
		if list.Kind != "PodList" || list.APIVersion != "v1" || len(list.Items) != 1 || list.Items[0].Name != "web" {
			t.Errorf("PodList = %+v, want the one pod web", list)
		}
		// carol is not allowed nodes/proxy, so exec is forbidden.
		code, _ = env.get(t, env.client(t, env.ca.clientCert(t, "carol")), "/exec/default/web/app?command=ls&output=1", "")
		if code != http.StatusForbidden {
			t.Errorf("exec as carol: got %d, want 403", code)
		}
	})

	t.Run("a bearer token accepted by TokenReview is 200", func(t *testing.T) {
		code, body := env.get(t, env.client(t), "/healthz", "alice-token")
		if code != http.StatusOK || body != "ok" {
			t.Errorf("got %d %q, want 200 ok", code, body)
		}
		if tokens := env.api.sentTokens(); !slices.Contains(tokens, "alice-token") {
			t.Errorf("TokenReviews sent for %v, want one for alice-token", tokens)
		}
	})
}

// Pins the 401 for requests without credentials when anonymous auth is off (the kubeadm
// default) and that anonymous requests, when on, are still authorized as system:anonymous.
func TestAnonymous(t *testing.T) {
	api, client := newFakeReviewAPI(t,
		func(string) *authenticationv1.UserInfo { return nil },
		func(spec authorizationv1.SubjectAccessReviewSpec) bool {
			return spec.ResourceAttributes.Subresource == "healthz"
		})
	cfg := openConfig(t, &fakeHost{}, &fakeStreaming{})
	cfg.WebhookAuthz, cfg.Client = true, client
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("anonymous /healthz: got %d, want 200", rec.Code)
	}
	rec = httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pods", nil))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "user=system:anonymous") {
		t.Errorf("anonymous /pods: got %d %q, want 403 for system:anonymous", rec.Code, rec.Body.String())
	}
	if sars := api.sentSARs(); len(sars) == 0 || sars[0].User != user.Anonymous {
		t.Errorf("SubjectAccessReviews %v, want them for %s", sars, user.Anonymous)
	}

	cfg.Anonymous = false
	cfg.ClientCAData = newTestCA(t, "test-client-ca").certPEM
	s, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("anonymous /healthz with anonymous auth off: got %d, want 401", rec.Code)
	}
}

func testJournal() *journal.Journal {
	j := journal.NewWithClock(8, clock.RealClock{})
	j.Record(journal.Event{Source: journal.SourceCRI, Kind: "StartContainer", Pod: "default/web"})
	return j
}

// /debug/journal and its page are behind the same authentication as every route, and are
// authorized as nodes/proxy, like upstream's /debug paths: the journal shows every pod's life.
func TestJournalNeedsAuthAndNodesProxy(t *testing.T) {
	env := startAuthTestEnv(t)
	for _, path := range []string{journal.Path, journal.UIPath} {
		if code, _ := env.get(t, env.client(t), path, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %d, want 401", path, code)
		}
		code, body := env.get(t, env.client(t, env.ca.clientCert(t, "carol")), path, "")
		if want := "subresource(s)=[proxy]"; code != http.StatusForbidden || !strings.Contains(body, want) {
			t.Errorf("GET %s as carol (nodes/pods only): %d %q, want 403 naming %s", path, code, body, want)
		}
		if code, body := env.get(t, env.client(t), path, "alice-token"); code != http.StatusOK {
			t.Errorf("GET %s as alice (nodes/proxy): %d %q, want 200", path, code, body)
		}
	}
	_, body := env.get(t, env.client(t), journal.Path+"?pod=default/web", "alice-token")
	var page journal.Page
	if err := json.Unmarshal([]byte(body), &page); err != nil || len(page.Events) != 1 || page.Events[0].Kind != "StartContainer" {
		t.Errorf("journal page %q (%v), want the one StartContainer event", body, err)
	}
}

package journal

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/clock"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		raw     string
		want    query
		wantErr string
	}{
		{"", query{}, ""},
		{"since=12&pod=default/web&source=cri", query{since: 12, filter: Filter{Pod: "default/web", Source: "cri"}}, ""},
		{"wait=30s", query{wait: 30 * time.Second}, ""},
		{"since=-1", query{}, "since="},
		{"since=abc", query{}, "since="},
		{"wait=2m", query{}, "wait="},
		{"wait=forever", query{}, "wait="},
		{"wait=-1s", query{}, "wait="},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.raw)
			got, err := parseQuery(v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("parseQuery(%q) error = %v, want one about %q", tt.raw, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseQuery(%q) = %+v, %v; want %+v", tt.raw, got, err, tt.want)
			}
		})
	}
}

func newTestServer(t *testing.T, j *Journal) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	Routes(mux, j)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getPage(t *testing.T, srv *httptest.Server, query string) Page {
	t.Helper()
	resp, err := http.Get(srv.URL + Path + "?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s?%s: %d %s %s", Path, query, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	var p Page
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return p
}

// GET /debug/journal answers a Page with the events after since that match pod and source.
func TestServeJSON(t *testing.T) {
	j := NewWithClock(16, clock.RealClock{})
	j.Record(Event{Source: SourceSyncLoop, Kind: "configCh ADD", Pod: "default/web", UID: "u1", Fields: map[string]string{"source": "api"}})
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	j.Record(Event{Source: SourceCRI, Kind: "RunPodSandbox", Pod: "default/web"})
	srv := newTestServer(t, j)

	p := getPage(t, srv, "")
	if !slices.Equal(seqs(p.Events), []uint64{1, 2, 3}) || p.OldestSeq != 1 || p.LastSeq != 3 {
		t.Errorf("all: %+v", p)
	}
	if e := p.Events[0]; e.Source != "syncloop" || e.Kind != "configCh ADD" || e.Pod != "default/web" || e.UID != "u1" || e.Fields["source"] != "api" {
		t.Errorf("first event decoded as %+v", e)
	}
	p = getPage(t, srv, "since=1&pod=default/web")
	if !slices.Equal(seqs(p.Events), []uint64{3}) || p.LastSeq != 3 {
		t.Errorf("since=1&pod=default/web: %+v", p)
	}
	p = getPage(t, srv, "since=3")
	if p.Events == nil || len(p.Events) != 0 {
		t.Errorf("since=3: events %#v, want [] (an empty JSON array, not null)", p.Events)
	}

	resp, err := http.Get(srv.URL + Path + "?since=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("since=x: %d, want 400", resp.StatusCode)
	}
}

// ?wait= holds the request until a matching event is recorded (long poll), or answers an empty
// page when the wait ends.
func TestServeJSONLongPoll(t *testing.T) {
	j := NewWithClock(16, clock.RealClock{})
	srv := newTestServer(t, j)
	got := make(chan Page, 1)
	go func() { got <- getPage(t, srv, "since=0&source=cri&wait=50s") }()
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	j.Record(Event{Source: SourceCRI, Kind: "StopContainer", Pod: "default/web"})
	if p := <-got; !slices.Equal(seqs(p.Events), []uint64{2}) {
		t.Errorf("long poll got %+v, want seq 2", p)
	}
	if p := getPage(t, srv, "since=2&wait=10ms"); len(p.Events) != 0 || p.LastSeq != 2 {
		t.Errorf("long poll that times out: %+v, want an empty page at lastSeq 2", p)
	}
}

// The page is served as HTML, polls ../journal, and puts event text in with textContent only.
func TestServeUI(t *testing.T) {
	srv := newTestServer(t, NewWithClock(4, clock.RealClock{}))
	resp, err := http.Get(srv.URL + UIPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", UIPath, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`new URL("../journal", location.href)`, `"since"`, "setTimeout(poll, 1000)"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(string(body), "innerHTML") {
		t.Error("page uses innerHTML: event text must go in as textContent")
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:10256", "127.0.0.2:1", "[::1]:10256", "127.0.0.1:0"} {
		if err := CheckLoopback(addr); err != nil {
			t.Errorf("CheckLoopback(%q) = %v, want nil", addr, err)
		}
	}
	for addr, want := range map[string]string{
		"0.0.0.0:10256":    "not a loopback IP address",
		"10.0.0.5:10256":   "not a loopback IP address",
		"[::]:10256":       "not a loopback IP address",
		"localhost:10256":  "not a loopback IP address",
		"127.0.0.1":        "not IP:port",
		"127.0.0.1:":       "no valid port",
		"127.0.0.1:99999":  "no valid port",
		":10256":           "not a loopback IP address",
		"example.com:8080": "not a loopback IP address",
	} {
		if err := CheckLoopback(addr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckLoopback(%q) = %v, want an error saying %q", addr, err, want)
		}
	}
}

// The debug listener refuses a non-loopback address before it listens, and serves the journal
// without authentication on a loopback one until ctx ends.
func TestDebugServer(t *testing.T) {
	if _, err := ListenDebug("0.0.0.0:0", NewWithClock(4, clock.RealClock{})); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("ListenDebug(0.0.0.0:0) = %v, want a refusal", err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	j := NewWithClock(4, clock.RealClock{})
	j.Record(Event{Source: SourceLease, Kind: "renew"})
	d, err := ListenDebug("127.0.0.1:0", j)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx) }()

	// A follower in a long poll must not hold up the shutdown.
	polled := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + d.Addr() + Path + "?since=1&wait=55s")
		if err == nil {
			resp.Body.Close()
		}
		polled <- err
	}()
	resp, err := http.Get("http://" + d.Addr() + Path)
	if err != nil {
		t.Fatal(err)
	}
	var p Page
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if err != nil || len(p.Events) != 1 || p.Events[0].Kind != "renew" {
		t.Errorf("GET %s on the debug listener: %+v, %v", Path, p, err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	<-polled
}

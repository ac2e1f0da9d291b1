package journal

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The journal's two pages, on the kubelet API (behind authentication, authorized as nodes/proxy
// like upstream's other /debug paths) and on the loopback debug listener (--debug-address).
const (
	Path   = "/debug/journal"    // JSON: ?since=<seq>&pod=<ns/name>&source=<s>&wait=<duration>
	UIPath = "/debug/journal/ui" // the HTML page that polls Path
)

// MaxWait bounds the long poll of ?wait=.
const MaxWait = time.Minute

//go:embed ui.html
var uiFiles embed.FS

// Routes registers Path and UIPath for j on mux.
func Routes(mux *http.ServeMux, j *Journal) {
	mux.HandleFunc("GET "+Path, j.serveJSON)
	mux.HandleFunc("GET "+UIPath, serveUI)
}

// query is what a request to Path asks for.
type query struct {
	since  uint64
	filter Filter
	wait   time.Duration // 0: answer at once
}

// parseQuery reads ?since=&pod=&source=&wait=. Pure.
func parseQuery(v url.Values) (query, error) {
	q := query{filter: Filter{Pod: v.Get("pod"), Source: v.Get("source")}}
	if s := v.Get("since"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, fmt.Errorf("since=%q: want the seq of the last event you have (a number, 0 for all)", s)
		}
		q.since = n
	}
	if s := v.Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d > MaxWait {
			return q, fmt.Errorf("wait=%q: want a duration from 0s to %s, e.g. wait=30s", s, MaxWait)
		}
		q.wait = d
	}
	return q, nil
}

// serveJSON answers with a Page. With ?wait=, it holds the request until an event matches or the
// wait ends (a long poll, for `minikubelet journal --follow`).
func (j *Journal) serveJSON(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var page Page
	if q.wait > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), q.wait)
		page, err = j.Wait(ctx, q.since, q.filter)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return // the client went away
		}
	} else {
		page = j.Read(q.since, q.filter)
	}
	data, err := json.Marshal(page)
	if err != nil {
		http.Error(w, fmt.Sprintf("encode journal: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(data)
}

// serveUI serves the page: plain HTML and JavaScript, no build step.
func serveUI(w http.ResponseWriter, _ *http.Request) {
	data, err := uiFiles.ReadFile("ui.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}

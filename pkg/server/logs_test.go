package server

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Pins the query parameters `kubectl logs` sends through the API server (v1 PodLogOptions as
// query parameters) and upstream's answers: 400 for what does not decode, 422 for what does
// not validate.
func TestPodLogOptions(t *testing.T) {
	sinceTime := metav1.NewTime(time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC))
	tests := []struct {
		name        string
		query       string
		want        *corev1.PodLogOptions
		decodeErr   bool
		validateErr bool
	}{
		{name: "none", query: "", want: &corev1.PodLogOptions{}},
		{
			name:  "all options",
			query: "follow=true&previous=1&timestamps=true&tailLines=10&limitBytes=500&sinceSeconds=30",
			want: &corev1.PodLogOptions{Follow: true, Previous: true, Timestamps: true,
				TailLines: ptr.To[int64](10), LimitBytes: ptr.To[int64](500), SinceSeconds: ptr.To[int64](30)},
		},
		{name: "false and 0 are false", query: "follow=false&previous=0&timestamps=FALSE", want: &corev1.PodLogOptions{}},
		{name: "a bare boolean is true", query: "follow=", want: &corev1.PodLogOptions{Follow: true}},
		{name: "sinceTime", query: "sinceTime=2026-01-02T15:04:05Z", want: &corev1.PodLogOptions{SinceTime: &sinceTime}},
		{name: "legacy tail", query: "tail=5", want: &corev1.PodLogOptions{TailLines: ptr.To[int64](5)}},
		{name: "legacy tail=all means no limit", query: "tailLines=3&tail=all", want: &corev1.PodLogOptions{}},
		{name: "stream All", query: "stream=All", want: &corev1.PodLogOptions{Stream: ptr.To("All")}},
		{name: "tailLines not a number", query: "tailLines=ten", decodeErr: true},
		{name: "bad sinceTime", query: "sinceTime=yesterday", decodeErr: true},
		{name: "negative tailLines", query: "tailLines=-1", validateErr: true},
		{name: "zero limitBytes", query: "limitBytes=0", validateErr: true},
		{name: "zero sinceSeconds", query: "sinceSeconds=0", validateErr: true},
		{name: "sinceSeconds and sinceTime", query: "sinceSeconds=5&sinceTime=2026-01-02T15:04:05Z", validateErr: true},
		{name: "stream Stdout needs PodLogsQuerySplitStreams", query: "stream=Stdout", validateErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := podLogOptions(q)
			if (err != nil) != tc.decodeErr {
				t.Fatalf("podLogOptions error = %v, want error %v", err, tc.decodeErr)
			}
			if err != nil {
				return
			}
			err = validatePodLogOptions(got)
			if (err != nil) != tc.validateErr {
				t.Fatalf("validatePodLogOptions error = %v, want error %v", err, tc.validateErr)
			}
			if err == nil && !apiequality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("options = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Pins that /containerLogs hands the decoded options and the path's pod and container to the
// host, writes stdout and stderr to the body, and answers bad queries 400/422 and unknown pods 404.
func TestContainerLogs(t *testing.T) {
	host := &fakeHost{logStdout: "out 1\n", logStderr: "err 1\n"}
	s, err := New(openConfig(t, host, &fakeStreaming{}))
	if err != nil {
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet,
		"/containerLogs/default/web/app?tailLines=2&timestamps=true&previous=true&limitBytes=100", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "out 1\nerr 1\n" {
		t.Fatalf("got %d %q, want 200 with stdout then stderr", rec.Code, rec.Body.String())
	}
	call := host.lastLogCall()
	want := &corev1.PodLogOptions{TailLines: ptr.To[int64](2), Timestamps: true, Previous: true, LimitBytes: ptr.To[int64](100)}
	if call == nil || call.namespace != "default" || call.pod != "web" || call.container != "app" || !apiequality.Semantic.DeepEqual(call.opts, want) {
		t.Errorf("ContainerLogs called with %+v, want default/web/app and %+v", call, want)
	}

	for _, tc := range []struct {
		path string
		want int
	}{
		{"/containerLogs/default/web/app?tailLines=x", http.StatusBadRequest},
		{"/containerLogs/default/web/app?tailLines=-1", http.StatusUnprocessableEntity},
		{"/containerLogs/default/nope/app", http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.want {
			t.Errorf("GET %s: got %d %q, want %d", tc.path, rec.Code, rec.Body.String(), tc.want)
		}
	}
}

// Pins that a following log stream is flushed as it is written (`kubectl logs -f` sees lines
// before the container stops): the client reads the first line while the host still blocks.
func TestContainerLogsFollowFlushes(t *testing.T) {
	release := make(chan struct{})
	host := &fakeHost{logStdout: "first line\n", logStderr: "last line\n", release: release}
	s, err := New(openConfig(t, host, &fakeStreaming{}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.handler)
	defer srv.Close()

	// Generous: without flushing the first read would never return; this turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/containerLogs/default/web/app?follow=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body := bufio.NewReader(resp.Body)

	// ContainerLogs is blocked on release: this line can only arrive if it was flushed.
	line, err := body.ReadString('\n')
	if err != nil || line != "first line\n" {
		t.Fatalf("first read = %q, %v; want the first line while the host still follows", line, err)
	}
	if call := host.lastLogCall(); call == nil || !call.opts.Follow {
		t.Errorf("ContainerLogs called with %+v, want Follow", call)
	}
	close(release)
	if rest := mustReadAll(t, body); rest != "last line\n" {
		t.Errorf("rest of the stream = %q, want the last line", rest)
	}
}

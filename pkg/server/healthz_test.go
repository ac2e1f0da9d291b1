package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

// getHealthz GETs http://addr/healthz, retrying for up to 5 s while nothing listens yet.
func getHealthz(t *testing.T, addr string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /healthz on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The healthz listener is plain HTTP, unauthenticated, and answers 200 "ok" — what kubeadm's
// wait-control-plane phase polls on 127.0.0.1:10248 (cmd/kubelet/app/server.go). When its port
// is taken it keeps the kubelet running and tries again every 5 s, as upstream's wait.Until.
func TestHealthzServesOKAndRetries(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := taken.Addr().String()
	port, _ := strconv.Atoi(addr[len("127.0.0.1:"):])
	clk := clocktesting.NewFakeClock(time.Now())
	done := make(chan error)
	go func() { done <- Healthz{Address: "127.0.0.1", Port: int32(port), Clock: clk}.Run(ctx) }()
	for !clk.HasWaiters() { // the first listen failed: it waits 5 s to try again
		time.Sleep(5 * time.Millisecond)
	}
	_ = taken.Close()
	clk.Step(healthzRetry)
	if code, body := getHealthz(t, addr); code != http.StatusOK || body != "ok" {
		t.Errorf("GET /healthz = %d %q, want 200 \"ok\"", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Errorf("healthz still listening on %s after its context ended", addr)
	}
}

// healthzPort 0 disables the listener: Run only waits for its context.
func TestHealthzPortZeroDisabled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Healthz{Address: "127.0.0.1", Port: 0}.Run(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Run returned before its context ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

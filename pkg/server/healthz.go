package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// healthzRetry is how long the healthz listener waits before it tries to listen again after it
// could not (upstream: wait.Until(…, 5*time.Second) in cmd/kubelet/app/server.go).
const healthzRetry = 5 * time.Second

// Healthz is the kubelet's second, plain-HTTP listener (healthzBindAddress:healthzPort, by default
// 127.0.0.1:10248), apart from the authenticated kubelet API: `kubeadm init`'s wait-control-plane
// phase and systemd watchdogs GET /healthz there. It answers "ok" from the ping check, as
// upstream's healthz.InstallHandler(mux) with no checks.
type Healthz struct {
	// Address and Port are where to listen; Port 0 means no listener (Run only waits).
	Address string
	Port    int32
	// Clock times the retries; nil is the real clock.
	Clock clock.Clock
}

// Run serves /healthz until ctx ends. A listener that fails (the port is taken) is logged and
// tried again every 5 s, as upstream: the kubelet keeps running without it.
func (h Healthz) Run(ctx context.Context) error {
	if h.Port == 0 {
		<-ctx.Done()
		return nil
	}
	if h.Clock == nil {
		h.Clock = clock.RealClock{}
	}
	mux := http.NewServeMux()
	healthz.InstallHandler(mux)
	addr := net.JoinHostPort(h.Address, strconv.Itoa(int(h.Port)))
	logger := klog.FromContext(ctx)
	for {
		if err := serveHealthz(ctx, addr, mux); err != nil {
			logger.Error(err, "Failed to start healthz server")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-h.Clock.After(healthzRetry):
		}
	}
}

// serveHealthz listens on addr and serves mux until ctx ends (nil) or the listener fails.
func serveHealthz(ctx context.Context, addr string, mux http.Handler) error {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Serving healthz", "address", l.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

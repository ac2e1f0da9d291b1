package journal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"
)

// CheckLoopback accepts only "IP:port" with a loopback IP (127.0.0.0/8 or ::1): the debug
// listener has no authentication, so it must not be reachable from another machine. Host names
// are refused too (localhost may resolve elsewhere). Pure.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not IP:port (%v): use e.g. 127.0.0.1:10256", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
		return fmt.Errorf("%q has no valid port: use e.g. 127.0.0.1:10256", addr)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback IP address and port: the debug listener has no authentication, so it binds only 127.0.0.1 (or ::1); "+
			"use e.g. 127.0.0.1:10256, and from elsewhere read /debug/journal on the kubelet API, which authorizes nodes/proxy", addr)
	}
	return nil
}

// DebugServer serves Path and UIPath over plain HTTP, without authentication, on a loopback
// address only (--debug-address), so `minikubelet journal` and a browser on the node can follow
// the kubelet without credentials. Create it with ListenDebug; serve with Serve.
type DebugServer struct {
	ln  net.Listener
	srv *http.Server
}

// ListenDebug checks addr with CheckLoopback and listens on it; it fails at once if the port is
// taken.
func ListenDebug(addr string, j *Journal) (*DebugServer, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, fmt.Errorf("debug address: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on debug address %s: %w (choose another port with --debug-address)", addr, err)
	}
	mux := http.NewServeMux()
	Routes(mux, j)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      MaxWait + 30*time.Second, // a long poll answers within MaxWait
		IdleTimeout:       90 * time.Second,
	}
	return &DebugServer{ln: ln, srv: srv}, nil
}

// Addr is the address it listens on (with the real port when addr asked for port 0).
func (d *DebugServer) Addr() string { return d.ln.Addr().String() }

// Serve serves until ctx is done, then closes the listener and every connection (long polls
// included) and returns nil; an error if serving fails.
func (d *DebugServer) Serve(ctx context.Context) error {
	d.srv.BaseContext = func(net.Listener) context.Context { return ctx } // long polls end with ctx
	errCh := make(chan error, 1)
	go func() { errCh <- d.srv.Serve(d.ln) }()
	klog.FromContext(ctx).Info("Serving the journal without authentication on the loopback debug address",
		"address", "http://"+d.Addr()+UIPath)
	select {
	case err := <-errCh:
		return fmt.Errorf("serve the debug address %s: %w", d.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down the debug address %s: %w", d.Addr(), err)
	}
	if err := <-errCh; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the debug address %s: %w", d.Addr(), err)
	}
	return nil
}

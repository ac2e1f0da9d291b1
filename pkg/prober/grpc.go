package prober

// The grpc handler (upstream: pkg/probe/grpc/grpc.go): grpc.health.v1.Health/Check on the pod IP.

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// grpcProbe connects to host:port (plain text: probes carry no credentials) and asks the health
// service about service ("" is the whole server), all within timeout. SERVING is a success
// "service healthy"; everything else is a failure whose output says what went wrong, in
// upstream's words:
//
//	timeout: failed to connect service "10.0.0.5:9000" within 1s: context deadline exceeded
//	error: this server does not implement the grpc health protocol (grpc.health.v1.Health): …
//	timeout: health rpc did not complete within 1s
//	service unhealthy (responded with "NOT_SERVING")
func grpcProbe(ctx context.Context, host, service string, port int, timeout time.Duration) (outcome, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))

	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithUserAgent(userAgent),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dialProbe(ctx, "tcp", addr, 0)
		}))
	if err != nil {
		return outcomeFailure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), nil
	}
	defer func() { _ = conn.Close() }()
	// Wait until connected, as upstream's blocking dial: a refused connection is retried with
	// back-off until the timeout.
	if err := waitReady(ctx, conn); err != nil {
		return outcomeFailure, fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err), nil
	}

	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return outcomeFailure, fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message()), nil
			case codes.DeadlineExceeded:
				return outcomeFailure, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout), nil
			}
		}
		return outcomeFailure, fmt.Sprintf("error: health rpc probe failed: %+v", err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return outcomeFailure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return outcomeSuccess, "service healthy", nil
}

// waitReady connects conn and waits until it is ready, or returns ctx's error.
func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		s := conn.GetState()
		if s == connectivity.Ready {
			return nil
		}
		if !conn.WaitForStateChange(ctx, s) {
			return ctx.Err()
		}
	}
}

package prober

// The tcpSocket handler (upstream: pkg/probe/tcp/tcp.go).

import (
	"context"
	"net"
	"strconv"
	"time"
)

// tcpProbe opens a TCP connection to host:port within timeout and closes it: success when it
// opened, otherwise a failure whose output is the dial error (refused, timed out).
func tcpProbe(ctx context.Context, host string, port int, timeout time.Duration) (outcome, string, error) {
	conn, err := dialProbe(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)), timeout)
	if err != nil {
		return outcomeFailure, err.Error(), nil
	}
	_ = conn.Close()
	return outcomeSuccess, "", nil
}

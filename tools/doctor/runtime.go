package doctor

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/minikubelet/minikubelet/pkg/cri/remote"
)

// maxUnixSocketPath is sizeof(sockaddr_un.sun_path) - 1 on Linux.
const maxUnixSocketPath = 107

// checkRuntime dials the CRI endpoint and makes the kubelet's first call, Version. With no
// endpoint, minikubelet serves its built-in fake runtime on <rootDir>/fake-runtime.sock, so the
// check is that it will be able to.
func checkRuntime(ctx context.Context, endpoint, rootDir string, timeout time.Duration) Result {
	if endpoint == "" {
		return checkBuiltinRuntime(filepath.Join(rootDir, "fake-runtime.sock"), timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := remote.Dial(ctx, endpoint, timeout)
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			return Result{Status: Fail, Message: "container runtime: " + err.Error(),
				Fix: "use a runtime that serves CRI v1 (containerd 1.6+, CRI-O 1.26+, or minikubelet fake-runtime serve)"}
		}
		socket := strings.TrimPrefix(endpoint, "unix://")
		return Result{Status: Fail, Message: "container runtime: " + err.Error(),
			Fix: fmt.Sprintf("start the runtime: minikubelet fake-runtime serve --socket %s, or containerd (systemctl start containerd);\n"+
				"or leave out --container-runtime-endpoint to use the built-in fake runtime", socket)}
	}
	defer func() { _ = c.Close() }()
	v := c.Version()
	return Result{Status: OK, Message: fmt.Sprintf("container runtime %s answers CRI Version: %s %s (CRI %s)",
		endpoint, v.GetRuntimeName(), v.GetRuntimeVersion(), v.GetRuntimeApiVersion())}
}

// checkBuiltinRuntime checks that the built-in fake runtime can listen on socket: the path fits
// a unix socket, and no other process (another minikubelet with this --root-dir) serves there.
func checkBuiltinRuntime(socket string, timeout time.Duration) Result {
	if len(socket) > maxUnixSocketPath {
		return Result{Status: Fail,
			Message: fmt.Sprintf("built-in fake runtime: its socket %s is %d bytes long, but a unix socket path may have %d", socket, len(socket), maxUnixSocketPath),
			Fix:     "use a shorter --root-dir"}
	}
	if conn, err := net.DialTimeout("unix", socket, timeout); err == nil {
		_ = conn.Close()
		return Result{Status: Fail, Message: fmt.Sprintf("built-in fake runtime: another process already serves %s", socket),
			Fix: "is minikubelet already running with this --root-dir? Stop it, or give this one another --root-dir"}
	}
	return Result{Status: OK, Message: fmt.Sprintf("container runtime: no --container-runtime-endpoint, minikubelet will serve its built-in fake runtime on %s", socket)}
}

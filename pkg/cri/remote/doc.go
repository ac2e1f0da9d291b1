// Package remote is minikubelet's CRI client: one gRPC connection to a container runtime's unix
// socket (the fake runtime of fakeruntime, or containerd), with the RuntimeService and
// ImageService clients the rest of the kubelet calls.
//
// It mirrors k8s.io/cri-client (v0.36, pkg/remote_runtime.go and pkg/remote_image.go), which the
// kubelet builds in pkg/kubelet/kubelet.go (PreInitRuntimeService). Like upstream it
//
//   - accepts "unix:///path" endpoints (and, for convenience, a bare path);
//   - allows messages of up to 16 MiB, since ListContainers on a busy node is large;
//   - gives every unary call a timeout (the kubelet's --runtime-request-timeout, 2 minutes by
//     default) unless the caller's context ends sooner; streams are not cut;
//   - checks on connect that the runtime speaks CRI v1 (Version), so a wrong or dead socket is
//     reported once, at start-up, with advice;
//   - keeps that one connection for the kubelet's life: when the runtime restarts, calls fail
//     with Unavailable (the node goes NotReady) and gRPC reconnects, backing off from 100 ms to
//     3 s, so the node is Ready again within seconds of the runtime.
//
// ForNode is ours: with `--nodes`, every node's Client shares one connection (DialConn) to a
// fakeruntime Mux, and each call carries its node's name in the gRPC metadata.
//
// It simplifies: no tracing, no per-method wrappers that translate errors, no Windows named pipes,
// and it exposes the generated clients directly instead of the kubelet's internalapi interfaces.
package remote

// Package exec is the kubelet side of `kubectl exec`, `attach` and `port-forward`, once the
// kubelet API (pkg/server) has authenticated and authorized the request and found the target:
// one CRI call for a streaming URL, then a proxy to that URL for the rest of the session.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//	pkg/kubelet/server/server.go         getExec, getAttach, getPortForward: after the lookup,
//	                                     streaming.WriteError on a CRI error, else
//	                                     proxy.NewUpgradeAwareHandler(url, …, responder)
//	pkg/kubelet/kubelet_pods.go          GetExec, GetAttach, GetPortForward → the runtime's URL
//	pkg/kubelet/cri/streaming            the runtime's streaming server library; at v1.36 it is
//	                                     staging/src/k8s.io/cri-streaming/pkg/streaming:
//	                                     errors.go WriteError, remotecommand NewOptions
//
// One request, after pkg/server has resolved the pod to a CRI container (or sandbox) ID:
//
//	ParseOptions(query) ── stdin/stdout/stderr/tty, "1" means on (pkg/server calls it first: 400)
//	     │
//	(*Proxy).Exec ─── Runtime.Exec(ExecRequest{ContainerId, Cmd, Stdin, Stdout, Stderr, Tty})
//	(*Proxy).Attach ─ Runtime.Attach(AttachRequest{…})              ──▶ CRI gRPC, returns at once
//	(*Proxy).PortForward ─ Runtime.PortForward(PortForwardRequest{PodSandboxId})
//	     │  error: WriteError ── NotFound 404, InvalidArgument/FailedPrecondition 400,
//	     │                       ResourceExhausted 429, else 500
//	     ▼  url: http://127.0.0.1:<port>/exec/<token>  (one use, one minute, loopback only)
//	proxyStream ── proxy.UpgradeAwareHandler (k8s.io/apimachinery/pkg/util/proxy): dial the URL,
//	               replay the upgrade request, hand the runtime's 101 back, then copy bytes both
//	               ways until one side closes ◀══▶ the process in the container
//
// The upgrade (SPDY, or WebSocket) is passed through untouched: the protocol is between the
// client (the API server) and the runtime's streaming server; the kubelet only splices bytes.
//
// Simplified compared to upstream:
//   - No WebSocket-to-SPDY translation (feature ExtendWebSocketsToKubelet, translator.
//     NewStreamTranslatorHandler / NewTunnelingHandler): this kubelet does not declare the
//     feature, so the API server translates before it calls us.
//   - Port-forward reads no "port" query parameters (upstream portforward.NewV4Options): the
//     runtime's streaming server reads each port from its stream's headers.
//   - The error responder keeps the status of an API error (400 "Upgrade request required" for a
//     request without an upgrade) where upstream's answers 500 for every proxy error.
//   - WriteError also maps InvalidArgument and FailedPrecondition to 400, and sets no
//     Retry-After on 429.
//   - No per-protocol request metrics.
//
// Invariants: the runtime is asked for a URL only after the caller has resolved the target, and
// a URL is used once, for the request that asked for it; a Proxy keeps no per-request state.
package exec

// Package server is the kubelet API: HTTPS on :10250, which the API server calls for
// `kubectl logs`, `exec`, `attach` and `port-forward`, and which monitoring scrapes. It owns the
// listener, TLS, the routes and authentication/authorization; for exec, attach and port-forward
// it finds the container or sandbox and hands the request to pkg/exec.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//	pkg/kubelet/server/server.go   routes, InstallAuthFilter, getContainerLogs, getRun, and the front
//	                               of getExec/getAttach/getPortForward (options, pod lookup; pkg/exec does the rest)
//	pkg/kubelet/server/auth.go     GetRequestAttributes: request → nodes/<subresource> authorization attributes
//	cmd/kubelet/app/auth.go        BuildAuth: delegating authenticator (x509 + TokenReview) and authorizer (SubjectAccessReview)
//	cmd/kubelet/app/server.go      InitializeTLS: the self-signed serving certificate in --cert-dir
//
// What `kubectl exec -it mypod -- sh` does, end to end:
//
//	kubectl ──POST pods/mypod/exec (SPDY or WebSocket upgrade)──▶ kube-apiserver
//	   │  authorizes the user for pods/exec; translates WebSocket to SPDY (this kubelet
//	   │  does not declare the ExtendWebSocketsToKubelet node feature)
//	   ▼
//	kube-apiserver ──https://<node>:10250/exec/<ns>/<pod>/<container>?command=sh&input=1&output=1&tty=1──▶ this server
//	   │  TLS: the API server presents its kubelet-client certificate (--kubelet-client-certificate)
//	   ▼
//	withAuth ── authenticate: x509 (client CA) │ bearer token (TokenReview) │ anonymous (if enabled) ── else 401
//	   │        authorize: SubjectAccessReview {user, verb=create, resource=nodes, name=<node>,
//	   │                   subresource=proxy} ── denied: 403 "Forbidden (user=…, verb=…, …)"
//	   ▼
//	getExec ── exec.ParseOptions(query) ── no stream asked for: 400
//	   │     ── Host.ResolveContainer(ns, pod, uid, container) → CRI container ID (else 404/500)
//	   ▼
//	pkg/exec  (*Proxy).Exec ── Streaming.Exec (CRI gRPC) → a one-time URL of the runtime's streaming server
//	   │      proxyStream ── proxy.UpgradeAwareHandler: dial the URL, replay the upgrade request, then
//	   ▼                     copy bytes both ways
//	runtime's streaming server ◀══▶ the process in the container
//
// healthz.go is the second listener, apart from this API: plain HTTP on healthzBindAddress:
// healthzPort (127.0.0.1:10248; 0 turns it off), /healthz answering "ok" without authentication,
// as cmd/kubelet/app/server.go starts it after RunKubelet. kubeadm's wait-control-plane polls it.
//
// File by file: server.go (Config, New, Run), routes.go (the mux, the small info handlers and
// /stats/summary), auth.go, tls.go, logs.go (/containerLogs), streaming.go (/exec, /attach,
// /portForward, /run).
//
// /containerLogs does not go through the runtime's streaming server: Host.ContainerLogs reads
// the container's CRI log file and the server flushes every write to the response.
//
// Authorization attributes (requestAttributes, a pure function): resource "nodes", name the
// node, verb from the HTTP method (GET get, POST create, PUT update, PATCH patch, DELETE delete),
// subresource from the path (/stats → stats, /metrics → metrics, /logs → log, /pods → pods or
// proxy, /healthz → healthz or proxy, /configz → configz or proxy, everything else → proxy).
// /debug/pprof/ (Config.Profiling, config enableProfilingHandler) is Go's net/http/pprof, as
// upstream. minikubelet adds /debug/journal and /debug/journal/ui (internal/journal, when
// Config.Journal is set). All fall under "everything else": nodes/proxy, as upstream's /debug
// paths.
// Every route, /healthz included, is behind authentication and authorization, as upstream.
//
// Simplified compared to upstream:
//   - No /metrics/cadvisor, /metrics/probes, /runningpods, /checkpoint, /logs (node logs),
//     /statusz or /flagz routes. Their authorization mapping is kept, so the table matches
//     upstream. /stats/summary (Config.Stats, nodes/stats) and /metrics/resource
//     (Config.ResourceMetrics, nodes/metrics) are served from pkg/stats; /stats/summary takes
//     ?only_cpu_and_memory=true as upstream.
//   - /healthz answers "ok" without health checks.
//   - No WebSocket-to-SPDY translation in the kubelet (ExtendWebSocketsToKubelet); the API server
//     does it for us. pkg/exec passes the upgrade through to the runtime unchanged.
//   - A self-signed or TLSCertFile serving certificate is loaded once (no reload); with
//     serverTLSBootstrap, Config.GetCertificate serves the CSR-issued one, which rotates. The
//     client CA file is reloaded while Run runs.
//   - /run uses CRI ExecSync (Streaming.ExecSync) and needs the "cmd" parameter.
//   - No request metrics or tracing filters.
//
// Invariants: no route is served without authentication; nothing is global — metrics come from
// the registry in Config.Metrics, never from a package-level registry.
package server

// Package logsafe keeps credentials out of minikubelet's log at any verbosity.
//
// The kubelet's API client is client-go, which logs every request and response from -v=6 and,
// from -v=8, their bodies (rest.Request's logBody: "Request Body" and "Response Body", cut at
// 1 KiB, 10 KiB at -v=9, whole at -v=10; protobuf bodies as a hex dump). A kubelet reads
// Secrets (the Get and Cache strategies of the secret manager GET them), service account
// tokens (TokenRequest) and writes CSRs: at -v=8 a Secret's value would be copied into the node's
// log, readable by anyone who can read logs. Bearer tokens in headers are already masked by
// client-go; bodies are not.
//
// BodyFilter is a klog.LogFilter that replaces the body of those two entries with its size. Every
// other line stays — the URL, verb, status and timing of each request, the masked headers — so
// -v=10 still shows what the kubelet asks the API server and what it gets back, just not the
// objects themselves (read those with kubectl). The app installs it once at start, before any
// logging: klog.SetLogFilter(logsafe.BodyFilter{}). It applies to klog's global functions and to
// every logger derived from klog.Background(), which is what client-go gets from our contexts.
//
// Why not the alternatives: klog's -vmodule can only raise the verbosity of some files, never
// lower it below -v; a wrapping http.RoundTripper sees the bodies but cannot stop the rest layer
// above it from logging them; capping -v at 7 would hide our own -v=8..10 detail too.
//
// Upstream counterpart: the logging sanitization of KEP-1753 (k8s.io/component-base/logs,
// --experimental-logging-sanitization, a klog.LogFilter that looked for values of fields tagged
// datapolicy:"password|token|…"), removed in v1.24 because reflecting over every logged value
// was too slow. Ours looks at nothing but the message, so it costs one string compare per entry.
// The real kubelet today relies on operators not running it at -v=8 or above in production.
package logsafe

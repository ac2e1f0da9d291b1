// Package debug holds the end-to-end test of the Delve workflow students follow (`make debug`,
// .vscode/launch.json): minikubelet built with -gcflags=all=-N -l runs under a headless Delve
// against the real local control plane, and the test drives Delve the way `dlv connect`, VS Code
// and GoLand do — over its JSON-RPC API v2, here with nothing but net/rpc/jsonrpc. If a breakpoint
// on the syncLoop stops there and shows readable variables, a student's session works too.
//
// Delve is the version pinned in hack/tools/go.mod, built (once, then cached) by
// hack/tools/install.sh dlv. The test never skips.
//
// Upstream counterpart: none in k8s.io/kubernetes; Delve's own service/test exercises the same API.
package debug

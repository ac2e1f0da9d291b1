// Package version says what minikubelet is: its own version and git commit (set at link time by
// the Makefile with -ldflags -X) and the Kubernetes version it is built against, which it reports
// as the Node's kubeletVersion. Upstream counterpart: k8s.io/component-base/version.
package version

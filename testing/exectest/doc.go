// Package exectest has the fakes that pkg/exec and pkg/server test against (a
// boundary fake, as fakeruntime is for the CRI): a CRI Runtime that
// hands out streaming URLs, a stand-in for the runtime's streaming server behind them, and a
// client that sends the upgrade request kubectl's (and the API server's) SPDY executor sends.
//
// Upstream keeps its fakes inside pkg/kubelet/server/server_test.go (fakeKubelet, and a real
// streaming.Server over a fakeRuntime); ours are shared by the two packages that cross the same
// boundary, so each fake exists once.
package exectest

// Package cri holds end-to-end tests of minikubelet's fake container runtime, run standalone as
// `minikubelet fake-runtime serve` (fakeruntime), driven
// by the real crictl from sigs.k8s.io/cri-tools, the tool operators point at containerd. If crictl
// reads and changes our runtime as it does containerd, so will the kubelet.
//
// crictl comes from $CRICTL or is built (once, then cached) by hack/tools/crictl.sh. If it cannot
// be had the tests fail: they never skip. critest, the CRI validation suite, is run against the
// fake too when $CRITEST or the cached build is available; see TestCritest.
//
// Upstream counterpart: k8s.io/kubernetes test/e2e_node (which tests a kubelet against a runtime)
// and cri-tools' own critest.
package cri

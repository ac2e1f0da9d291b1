// Package containerd runs minikubelet against a real container runtime: containerd 1.6 (Debian 12)
// with runc, started privately by hack/containerd/up.sh for each test, with our local busybox and
// pause images (hack/containerd/images.sh: no registry is needed). The control plane is the real
// one of test/e2e/framework. What the fake runtime only models is real here: processes in their
// own mount and PID namespaces, CRI log files written by containerd, exec through containerd's
// streaming server, bind-mounted Secret volumes, a runtime that goes away and comes back, and the
// volume manager's mounts (volumes_test.go: subPath, hostPath PVs, claims; csi_test.go: our CSI
// driver run as a DaemonSet from its local image).
//
// The pods use hostNetwork: true: up.sh gives containerd a loopback-only CNI network (enough for
// NetworkReady), so pods get no IP of their own and the tests change nothing on the host network.
// As root, TestMain first runs the package again in a mount namespace of its own
// (framework.InPrivateMounts): containerd's overlays and the tmpfs minikubelet mounts for an
// emptyDir with medium Memory live and die there, never in the host's mount table.
//
// Gated: the tests need root and hack/containerd/install.sh (containerd, runc, busybox-static,
// containernetworking-plugins). Without them, or where containerd cannot start (TestMain tries),
// every test is skipped with the reason — unless MINIKUBELET_E2E_CONTAINERD=required, when that is
// a failure (CI sets it after running install.sh, so a broken setup cannot pass as skipped).
//
// Upstream counterpart: k8s.io/kubernetes test/e2e_node, which runs the kubelet against
// containerd on a real node.
package containerd

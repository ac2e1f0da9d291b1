#!/usr/bin/env bash
# images.sh: build our local busybox and pause images and import them into a running containerd,
# in the k8s.io namespace where its CRI plugin (and so the kubelet) sees them. No registry is
# needed: the images are made from Debian's busybox-static and ./hack/containerd/pause.
#
# Usage: hack/containerd/images.sh --address /path/containerd.sock [--snapshotter overlayfs|native]
#                                   [--e2e-images LIST --e2e-bin-dir DIR --kube-src DIR [--etcd-bin-dir DIR]]
#                                   [--kubeadm-images LIST --kubeadm-bin-dir DIR] [--csi-hostpath]
#
#   docker.io/minikubelet/busybox:local   sh, ls, cat, sleep, … (busybox-static, hard links in /bin)
#   docker.io/minikubelet/pause:local     the sandbox image (CRI sandbox_image in up.sh's config)
#
# With --e2e-images (make conformance), also the upstream e2e images, under the exact names LIST
# holds (the output of `e2e.test --list-images`) — those we can build honestly, see
# images/e2e.go: agnhost (2.63.0, and as 2.55, the specs' "previous" agnhost) and nonewprivs (their
# programs from --e2e-bin-dir, built by hack/conformance/build.sh from the k8s.io/kubernetes module
# whose source is --kube-src, which gives their versions, i.e. tags; agnhost with busybox applets
# and Debian's bash — also its sh — curl, dig, getent and nc), kitten and nautilus (agnhost with
# their html), busybox and nonroot (busybox-static), glibc-dns-testing, pause (ours), and where
# --e2e-bin-dir holds them (build.sh --suite-images) nginx and sample-apiserver. It prints each
# name it built and each it did not. With --etcd-bin-dir DIR (make conformance: the control
# plane's etcd), also registry.k8s.io/etcd at LIST's tag, which the Aggregator spec runs; the
# kubeadm cluster has it from --kubeadm-images.
#
# With --kubeadm-images LIST --kubeadm-bin-dir DIR (make kubeadm-up), also the images kubeadm runs,
# under the exact names LIST holds (`kubeadm config images list`), from the programs in DIR (see
# images/kubeadm.go): kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy (with
# Debian's iptables), etcd, coredns, and pause (ours).
#
# With --csi-hostpath, also docker.io/minikubelet/csi-hostpath:local: our CSI node driver
# (tools/csi-hostpath, built static), which test/e2e/containerd runs as a DaemonSet.
#
# Pods use them with imagePullPolicy IfNotPresent (the default for a tag other than :latest) or
# Never; Always would try a registry and fail with ErrImagePull.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
address="" snapshotter=overlayfs e2e_args=() csi=""
while (( $# )); do
  case $1 in
    --address) address=$2; shift 2 ;;
    --snapshotter) snapshotter=$2; shift 2 ;;
    --e2e-images) e2e_args+=(--e2e-list "${2:?}"); shift 2 ;;
    --e2e-bin-dir|--kube-src|--etcd-bin-dir) e2e_args+=("$1" "${2:?}"); shift 2 ;;
    --kubeadm-images) e2e_args+=(--kubeadm-list "${2:?}"); shift 2 ;;
    --kubeadm-bin-dir) e2e_args+=("$1" "${2:?}"); shift 2 ;;
    --csi-hostpath) csi=1; shift ;;
    *) echo "images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $address ]] || { echo "usage: images.sh --address SOCKET [--snapshotter NAME]" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/minikubelet-images.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Both programs are small; the Go build cache makes these seconds the first time, then instant.
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/pause" ./hack/containerd/pause)
(cd "$repo" && go build -o "$work/images" ./hack/containerd/images)
if [[ -n $csi ]]; then
  (cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/csi-hostpath" ./tools/csi-hostpath)
  e2e_args+=(--csi-hostpath "$work/csi-hostpath")
fi
"$work/images" --busybox /bin/busybox --pause "$work/pause" --out "$work/images.tar" ${e2e_args[@]+"${e2e_args[@]}"}
# The snapshotter must be the one the CRI plugin uses, or its containers find no unpacked image.
ctr --address "$address" -n k8s.io images import --snapshotter "$snapshotter" "$work/images.tar" >/dev/null
echo "imported docker.io/minikubelet/busybox:local and docker.io/minikubelet/pause:local${e2e_args[*]:+ and the images built above} (snapshotter $snapshotter)"

#!/usr/bin/env bash
# images.sh: build our local busybox and pause images and import them into a running containerd,
# in the k8s.io namespace where its CRI plugin (and so the kubelet) sees them. No registry is
# needed: the images are made from Debian's busybox-static and ./hack/containerd/pause.
#
# Usage: hack/containerd/images.sh --address /path/containerd.sock [--snapshotter overlayfs|native]
#
#   docker.io/minikubelet/busybox:local   sh, ls, cat, sleep, … (busybox-static, hard links in /bin)
#   docker.io/minikubelet/pause:local     the sandbox image (CRI sandbox_image in up.sh's config)
#
# Pods use them with imagePullPolicy IfNotPresent (the default for a tag other than :latest) or
# Never; Always would try a registry and fail with ErrImagePull.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
address="" snapshotter=overlayfs
while (( $# )); do
  case $1 in
    --address) address=$2; shift 2 ;;
    --snapshotter) snapshotter=$2; shift 2 ;;
    *) echo "images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $address ]] || { echo "usage: images.sh --address SOCKET [--snapshotter NAME]" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/minikubelet-images.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Both programs are small; the Go build cache makes these seconds the first time, then instant.
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/pause" ./hack/containerd/pause)
(cd "$repo" && go build -o "$work/images" ./hack/containerd/images)
"$work/images" --busybox /bin/busybox --pause "$work/pause" --out "$work/images.tar"
# The snapshotter must be the one the CRI plugin uses, or its containers find no unpacked image.
ctr --address "$address" -n k8s.io images import --snapshotter "$snapshotter" "$work/images.tar" >/dev/null
echo "imported docker.io/minikubelet/busybox:local and docker.io/minikubelet/pause:local (snapshotter $snapshotter)"

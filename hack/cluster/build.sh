#!/usr/bin/env bash
# build.sh: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the
# Go module proxy into a cache outside the repo, keyed by version. Rebuilds only what is missing, so
# the first run takes ~10 minutes on 2 cores and later runs take milliseconds.
#
# Usage: hack/cluster/build.sh             prints the directory that holds the binaries
#        hack/cluster/build.sh kubemark    also builds kubemark (the hollow node, for make bench;
#                                          it compiles the whole kubelet, ~6 min cold)
set -euo pipefail

KUBE_VERSION=v1.36.3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/k8s/${KUBE_VERSION}
mkdir -p "$cache"
# Concurrent callers (make bench beside make test, parallel e2e packages) wait for one build.
exec 9>"$cache/.lock"
flock 9

# The version ldflags the upstream build (hack/lib/version.sh) sets, so `--version` prints v1.36.3.
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done

build() { # build <binary name> <import path>
  local name=$1 pkg=$2
  if [[ -x "$cache/$name" ]]; then return 0; fi
  echo "building $name ($pkg) into $cache (first time only)" >&2
  (cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w ${ldflags}" -o "$cache/$name.tmp" "$pkg")
  mv "$cache/$name.tmp" "$cache/$name" # atomic: a half-built binary is never picked up
}

build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
build kubectl k8s.io/kubernetes/cmd/kubectl
for extra in "$@"; do
  case $extra in
    kubemark) build kubemark k8s.io/kubernetes/cmd/kubemark ;;
    *) echo "build.sh: unknown extra binary '$extra' (known: kubemark)" >&2; exit 2 ;;
  esac
done
echo "$cache"

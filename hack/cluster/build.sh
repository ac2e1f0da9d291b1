#!/usr/bin/env bash
# build.sh: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the
# Go module proxy into a cache outside the repo, keyed by version. Rebuilds only what is missing, so
# the first run takes ~10 minutes on 2 cores and later runs take milliseconds.
#
# Usage: hack/cluster/build.sh             prints the directory that holds the binaries
#        hack/cluster/build.sh kubemark    also builds kubemark (the hollow node, for make bench;
#                                          it compiles the whole kubelet, ~6 min cold)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hack/lib/kube-build.sh
source "$here/../lib/kube-build.sh"
# Concurrent callers (make bench beside make test, parallel e2e packages) wait for one build.
kube_build_init k8s "$here"

kube_build etcd go.etcd.io/etcd/server/v3
kube_build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
kube_build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
kube_build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler
kube_build kubectl k8s.io/kubernetes/cmd/kubectl
for extra in "$@"; do
  case $extra in
    kubemark) kube_build kubemark k8s.io/kubernetes/cmd/kubemark ;;
    *) echo "build.sh: unknown extra binary '$extra' (known: kubemark)" >&2; exit 2 ;;
  esac
done
echo "$cache"

#!/usr/bin/env bash
# build.sh: build what `make kubeadm-up` runs besides the control plane hack/cluster/build.sh
# already builds — kubeadm and kube-proxy (k8s.io/kubernetes v1.36.3, with the version ldflags
# kubeadm compares with --kubernetes-version) and CoreDNS at the tag kubeadm v1.36.3 names — from
# the Go module proxy into ${XDG_CACHE_HOME:-~/.cache}/minikubelet/kubeadm/v1.36.3. Rebuilds only
# what is missing; the first run is CPU-heavy (see docs/kubeadm.md for the measured times).
#
# Usage: hack/kubeadm/build.sh      prints the directory that holds the binaries
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hack/lib/kube-build.sh
source "$here/../lib/kube-build.sh"
kube_build_init kubeadm "$here"

# The CoreDNS tag of kubeadm v1.36.3 (cmd/kubeadm/app/constants: CoreDNSVersion). CoreDNS is its
# own module: `go install module@version` builds it with exactly the dependencies its go.mod
# pins (not the ones k8s.io/kubernetes would select beside it).
COREDNS_VERSION=v1.14.2

kube_build kubeadm k8s.io/kubernetes/cmd/kubeadm
kube_build kube-proxy k8s.io/kubernetes/cmd/kube-proxy
if [[ ! -x "$cache/coredns" ]]; then
  echo "building coredns (github.com/coredns/coredns@$COREDNS_VERSION) into $cache (first time only)" >&2
  tmp=$(mktemp -d "$cache/.coredns.XXXXXX")
  (cd "$tmp" && GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-trimpath \
    go install -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION")
  mv "$tmp/coredns" "$cache/coredns"
  rmdir "$tmp"
fi
echo "$cache"

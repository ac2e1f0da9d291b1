#!/usr/bin/env bash
# build.sh: build the upstream end-to-end test binaries `make conformance` runs — e2e.test
# (`go test -c k8s.io/kubernetes/test/e2e`), the ginkgo CLI (the version k8s.io/kubernetes v1.36.3
# pins), and the programs of two e2e test images, static: agnhost and nonewprivs' nnp — from the
# Go module proxy into a cache outside the repo, keyed by version. Rebuilds only what is missing:
# a cold e2e.test takes 10–20 minutes on 2 cores (4 when the control plane's build has warmed the
# Go build cache), later runs take milliseconds.
#
# Usage: hack/conformance/build.sh [--suite-images]   prints the directory that holds the binaries
#
# Always, for the nginx image (hack/containerd/images/e2e.go; specs of `make test`'s list use it):
# Debian's nginx package, unpacked into nginx/ (not installed: that would start a web server on
# the host); a download of about 1 MB.
# --suite-images (SUITE=conformance; once, for a single-node run of those specs): also
# sample-apiserver-v0.29.2, k8s.io/sample-apiserver at the version of the image the Aggregator
# spec names (registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2). A cold sample-apiserver
# build takes a few minutes; `make test` does not ask for it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hack/lib/kube-build.sh
source "$here/../lib/kube-build.sh"
# One build at a time: a second caller waits for the first (its own lock, so that a long e2e.test
# build never holds up hack/cluster/build.sh).
kube_build_init conformance "$here"

kube_build ginkgo github.com/onsi/ginkgo/v2/ginkgo
kube_build agnhost k8s.io/kubernetes/test/images/agnhost
kube_build nnp k8s.io/kubernetes/test/images/nonewprivs
kube_build e2e.test k8s.io/kubernetes/test/e2e test

# sample-apiserver VERSION: built in a copy of its module, as upstream's Makefile builds it in a
# clone: its go.mod has replace lines, which `go install k8s.io/sample-apiserver@VERSION` refuses.
sample_apiserver() {
  local v=$1 out="$cache/sample-apiserver-$1" work dir
  if [[ -x $out ]]; then return 0; fi
  echo "building sample-apiserver $v into $cache (first time only)" >&2
  work=$(mktemp -d "${TMPDIR:-/tmp}/sample-apiserver.XXXXXX")
  dir=$(cd "$work" && go mod download -json "k8s.io/sample-apiserver@$v" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  cp -r "$dir" "$work/src" && chmod -R u+w "$work/src"
  (cd "$work/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out.tmp" .)
  rm -rf "$work"
  mv "$out.tmp" "$out"
}

# nginx: Debian's package for this machine, downloaded and unpacked (its libraries are this
# machine's, which the image builder copies as `ldd` names them).
nginx_unpacked() {
  local work
  if [[ -x $cache/nginx/usr/sbin/nginx ]]; then return 0; fi
  echo "unpacking Debian's nginx into $cache/nginx (first time only)" >&2
  work=$(mktemp -d "${TMPDIR:-/tmp}/nginx.XXXXXX")
  (cd "$work" && apt-get download nginx >/dev/null 2>&1) || { echo "build.sh: apt-get download nginx failed (Debian/Ubuntu with apt needed)" >&2; exit 1; }
  dpkg-deb -x "$work"/nginx_*.deb "$work/root"
  rm -rf "$cache/nginx"
  mv "$work/root" "$cache/nginx"
  rm -rf "$work"
}

nginx_unpacked
if [[ ${1:-} == --suite-images ]]; then
  sample_apiserver v0.29.2
fi
echo "$cache"

#!/usr/bin/env bash
# build.sh: build the upstream end-to-end test binaries `make conformance` runs — e2e.test
# (`go test -c k8s.io/kubernetes/test/e2e`), the ginkgo CLI (the version k8s.io/kubernetes v1.36.3
# pins), and the programs of two e2e test images, static: agnhost and nonewprivs' nnp — from the
# Go module proxy into a cache outside the repo, keyed by version. Rebuilds only what is missing:
# a cold e2e.test takes 10–20 minutes on 2 cores (4 when the control plane's build has warmed the
# Go build cache), later runs take milliseconds.
#
# Usage: hack/conformance/build.sh      prints the directory that holds the binaries
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
echo "$cache"

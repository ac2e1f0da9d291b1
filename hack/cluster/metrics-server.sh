#!/usr/bin/env bash
# metrics-server.sh: build metrics-server (sigs.k8s.io/metrics-server, the version pinned below)
# from the Go module proxy into ${XDG_CACHE_HOME:-~/.cache}/minikubelet/metrics-server/<version>/
# and print the binary's path. Cached: only the first run compiles (~2 minutes on 2 cores).
#
# Usage: hack/cluster/metrics-server.sh
#
# It is built with `go install pkg@version`, so from metrics-server's own go.mod and go.sum (its
# k8s.io modules are v0.33; the checksum database verifies the module), not from hack/cluster's
# go.mod, whose k8s.io/* v0.36.3 it would not compile against. hack/cluster/up.sh metrics-server
# calls it; `cluster metrics-server` starts the binary (see hack/cluster/metricsserver.go).
set -euo pipefail

# The newest v0.8.x release on the Go module proxy (v0.8.0, 2025-06; its go.mod pins k8s.io/* v0.33.2).
METRICS_SERVER_VERSION=v0.8.0

cache=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/metrics-server/${METRICS_SERVER_VERSION}
mkdir -p "$cache"
# Concurrent callers (two e2e packages) wait for one build.
exec 9>"$cache/.lock"
flock 9
if [[ ! -x $cache/metrics-server ]]; then
  echo "building metrics-server ${METRICS_SERVER_VERSION} into $cache (first time only)" >&2
  tmp=$(mktemp -d "$cache/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && CGO_ENABLED=0 GOBIN=$tmp GOFLAGS=-buildvcs=false \
    go install -trimpath -ldflags "-s -w" "sigs.k8s.io/metrics-server/cmd/metrics-server@${METRICS_SERVER_VERSION}")
  mv "$tmp/metrics-server" "$cache/metrics-server"
fi
echo "$cache/metrics-server"

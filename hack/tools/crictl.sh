#!/usr/bin/env bash
# crictl.sh: build crictl and critest (the CRI validation suite, a compiled Go test binary) from
# sigs.k8s.io/cri-tools into a cache outside the repo, keyed by version. Builds only what is
# missing: the first run takes ~3 minutes on 2 cores, later runs take milliseconds.
#
# Usage: hack/tools/crictl.sh     prints the directory that holds crictl and critest on stdout;
#                                 progress goes to stderr.
#
# Why v1.34.0: it is the only cri-tools version the module proxy serves to this project. The
# checksum database does not know it, so GONOSUMDB is set for this one module (its dependencies are
# still verified as usual). The module cache is read-only, so we build from a private copy of it.
set -euo pipefail

CRI_TOOLS_VERSION=v1.34.0
module=sigs.k8s.io/cri-tools
cache=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/cri-tools/${CRI_TOOLS_VERSION}
mkdir -p "$cache"
# Tests in parallel (several e2e packages, parallel tests) call this at once on a cold cache: one
# builds, the others wait for it here instead of racing on the same .tmp files.
exec 9>"$cache/.lock"
flock 9

if [[ -x "$cache/crictl" && -x "$cache/critest" ]]; then
  echo "$cache"
  exit 0
fi

export GONOSUMDB="${module}${GONOSUMDB:+,$GONOSUMDB}"
export GOFLAGS="-mod=mod"
export CGO_ENABLED=0

echo "downloading ${module}@${CRI_TOOLS_VERSION}" >&2
# go mod download -json prints {"Dir": ...}; run it outside any module so our go.mod is not touched.
dir=$(cd "$(mktemp -d)" && go mod download -json "${module}@${CRI_TOOLS_VERSION}" \
  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z "$dir" || ! -d "$dir" ]]; then
  echo "crictl.sh: go mod download did not report a source directory for ${module}@${CRI_TOOLS_VERSION}" >&2
  exit 1
fi

# Build from a writable copy: go may want to update go.sum next to go.mod.
src=$(mktemp -d "${TMPDIR:-/tmp}/cri-tools.XXXXXX")
trap 'chmod -R u+w "$src" 2>/dev/null; rm -rf "$src"' EXIT
cp -R "$dir/." "$src/"
chmod -R u+w "$src"

ldflags="-s -w -X ${module}/pkg/version.Version=${CRI_TOOLS_VERSION}"

if [[ ! -x "$cache/crictl" ]]; then
  echo "building crictl into $cache (first time only)" >&2
  (cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$cache/crictl.tmp" ./cmd/crictl)
  mv "$cache/crictl.tmp" "$cache/crictl" # atomic: a half-built binary is never picked up
fi

if [[ ! -x "$cache/critest" ]]; then
  echo "building critest into $cache (first time only)" >&2
  (cd "$src" && go test -c -trimpath -ldflags "$ldflags" -o "$cache/critest.tmp" ./cmd/critest)
  mv "$cache/critest.tmp" "$cache/critest"
fi

echo "$cache"

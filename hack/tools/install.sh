#!/usr/bin/env bash
# install.sh TOOL: build a developer tool pinned in hack/tools/go.mod into the user cache (once per
# version) and print the path of its binary. Tools: golangci-lint.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=${1:?usage: install.sh golangci-lint}
case $tool in
  golangci-lint) pkg=github.com/golangci/golangci-lint/v2/cmd/golangci-lint; mod=github.com/golangci/golangci-lint/v2 ;;
  *) echo "install.sh: unknown tool $tool" >&2; exit 2 ;;
esac
version=$(cd "$here" && go list -m -f '{{.Version}}' "$mod")
cache=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/tools/$tool-$version
if [[ ! -x $cache/$tool ]]; then
  echo "building $tool $version into $cache (first time only)" >&2
  mkdir -p "$cache"
  (cd "$here" && go build -o "$cache/$tool.tmp" "$pkg")
  mv "$cache/$tool.tmp" "$cache/$tool"
fi
echo "$cache/$tool"

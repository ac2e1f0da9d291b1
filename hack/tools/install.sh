#!/usr/bin/env bash
# install.sh TOOL: make a developer tool available and print the path of its binary.
#
#   golangci-lint, kind,  built from the version pinned in hack/tools/go.mod into the user cache
#   dlv, deadcode         (once per version)
#   ShellCheck            (install.sh shellcheck) Debian's package, installed with apt-get when it
#                         is not on PATH (CI runs as root on Debian; elsewhere this says how to get it)
#   chromium              (install.sh chromium) Debian's package the same way: the headless browser
#                         test/e2e/journal renders /debug/journal/ui with
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=${1:?usage: install.sh golangci-lint|kind|dlv|deadcode|shellcheck|chromium}

# install_apt PACKAGE: print the path of PACKAGE's command, installing the Debian package first if
# it is missing. Only as root with apt-get: anywhere else, say how to install it and fail.
install_apt() {
  local pkg=$1 path
  if path=$(command -v "$pkg"); then
    echo "$path"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    echo "install.sh: $pkg is not installed. Install it with your package manager:" >&2
    echo "  sudo apt-get install -y $pkg    (Debian/Ubuntu)" >&2
    echo "  brew install $pkg               (macOS)" >&2
    return 1
  fi
  echo "installing $pkg with apt-get (first time only)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have no package lists yet: update them once if the install fails.
  if ! apt-get install -y --no-install-recommends "$pkg" >&2; then
    apt-get update >&2
    apt-get install -y --no-install-recommends "$pkg" >&2
  fi
  command -v "$pkg"
}

case $tool in
  golangci-lint) pkg=github.com/golangci/golangci-lint/v2/cmd/golangci-lint; mod=github.com/golangci/golangci-lint/v2 ;;
  kind) pkg=sigs.k8s.io/kind; mod=sigs.k8s.io/kind ;;
  dlv) pkg=github.com/go-delve/delve/cmd/dlv; mod=github.com/go-delve/delve ;;
  deadcode) pkg=golang.org/x/tools/cmd/deadcode; mod=golang.org/x/tools ;;
  shellcheck) install_apt shellcheck; exit ;;
  chromium) install_apt chromium; exit ;;
  *) echo "install.sh: unknown tool $tool (known: golangci-lint, kind, dlv, deadcode, shellcheck, chromium)" >&2; exit 2 ;;
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

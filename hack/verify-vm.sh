#!/usr/bin/env bash
# verify-vm.sh: check vm.yaml, the Lima VM, without starting it.
#   1. `limactl validate vm.yaml`, when limactl is on PATH (it is not in the Go module proxy, so CI
#      does without it)
#   2. hack/tools/configcheck's own tests, then configcheck on vm.yaml: a strict parse into the Lima
#      fields we use, our rules (both arches, bash with set -eux, a kind probe with a hint, exact
#      pins with reasons), and the pins compared with the repo's (.go-version, hack/tools/go.mod,
#      hack/cluster/build.sh)
#   3. shellcheck on the provision and probe scripts inside it
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if command -v limactl >/dev/null; then
  echo "== limactl validate vm.yaml"
  limactl validate vm.yaml
else
  echo "== limactl is not on PATH: skipping limactl validate; configcheck below still checks vm.yaml"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/verify-vm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# gomod MODULE: the version hack/tools/go.mod requires of MODULE ("" if none).
gomod() { awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2 }' hack/tools/go.mod; }

echo "== configcheck (tests, then vm.yaml)"
(cd hack/tools && go test -count=1 ./configcheck && go build -o "$tmp/configcheck" ./configcheck)
"$tmp/configcheck" vm \
  --go-version "$(cat .go-version)" \
  --kind-version "$(gomod sigs.k8s.io/kind)" \
  --kubectl-version "$(sed -n 's/^KUBE_VERSION=//p' hack/cluster/build.sh)" \
  --delve-version "$(gomod github.com/go-delve/delve)" \
  --scripts-dir "$tmp/scripts" vm.yaml

echo "== shellcheck (vm.yaml's scripts)"
shellcheck=$(hack/tools/install.sh shellcheck)
"$shellcheck" "$tmp"/scripts/*.sh
echo "vm.yaml's scripts clean: $(cd "$tmp/scripts" && echo *.sh)"

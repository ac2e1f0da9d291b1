#!/usr/bin/env bash
# verify-all.sh: gofmt, go vet and golangci-lint over every module of the repo; shellcheck over its
# shell scripts (hack/verify-shell.sh); vm.yaml (hack/verify-vm.sh); the offline tests of the kind
# scripts (hack/verify-kind.sh); docs/architecture.md names every package
# (hack/verify-architecture.sh); no function is over 80 lines (hack/verify-funclen.sh); every
# function is reachable from a main package (hack/verify-deadcode.sh); imports run one way: pkg/
# never imports fakeruntime/, tools/ or testing/ (hack/verify-imports.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lint=$(hack/tools/install.sh golangci-lint)
fail=0
bad=$( (git ls-files -z '*.go' 2>/dev/null || find . -name '*.go' -print0) | xargs -0 gofmt -l)
if [[ -n $bad ]]; then echo "gofmt would change:"; echo "$bad"; fail=1; fi
for mod in . hack/cluster hack/conformance hack/kubeadm hack/tools; do
  echo "== go vet ($mod)"
  (cd "$mod" && go vet ./...) || fail=1
  echo "== golangci-lint ($mod)"
  # --allow-serial-runners: a second run (another terminal) waits for the first instead of failing.
  (cd "$mod" && "$lint" run --allow-serial-runners --config "$OLDPWD/.golangci.yaml" ./...) || fail=1
done
for check in shell vm kind architecture imports funclen deadcode; do
  echo "== hack/verify-$check.sh"
  "hack/verify-$check.sh" || fail=1
done
exit $fail

#!/usr/bin/env bash
# verify-all.sh: gofmt, go vet and golangci-lint over every module of the repo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
lint=$(hack/tools/install.sh golangci-lint)
fail=0
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n $bad ]]; then echo "gofmt would change:"; echo "$bad"; fail=1; fi
for mod in . hack/cluster; do
  echo "== go vet ($mod)"
  (cd "$mod" && go vet ./...) || fail=1
  echo "== golangci-lint ($mod)"
  (cd "$mod" && "$lint" run --config "$OLDPWD/.golangci.yaml" ./...) || fail=1
done
exit $fail

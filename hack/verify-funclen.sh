#!/usr/bin/env bash
# verify-funclen.sh: no function in the repo's Go code is longer than 80 lines, from its `func`
# line to its closing brace (hack/tools/funclen). Tests, testdata and generated files do not count;
# everything else does — pkg, cmd, test, labs and hack, hack/tools and this checker included. There
# are no exceptions. Run by hack/verify-all.sh; exits 1, naming each long function, if one is found.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
max_lines=80

tmp=$(mktemp -d "${TMPDIR:-/tmp}/verify-funclen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd hack/tools && go build -o "$tmp/funclen" ./funclen)

if ! "$tmp/funclen" -max "$max_lines" pkg cmd test labs hack; then
  echo "verify-funclen: split each function above by step, the way upstream's computePodActions"
  echo "  reads: a small named function per step (compute this, decide that), each one a unit a"
  echo "  student can step over in Delve; keep the steps in the order they run"
  exit 1
fi

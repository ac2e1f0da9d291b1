#!/usr/bin/env bash
# verify-architecture.sh: keep docs/architecture.md and the code true to each other: every
# directory under pkg/, internal/, fakeruntime/, tools/ and testing/ that holds Go code (a non-test .go file) is named in docs/architecture.md,
# as `<tree>/<dir>` (or with a trailing slash) in backticks or as a table cell. (The size rule is per function,
# not per file: hack/verify-funclen.sh.)
# Run by hack/verify-all.sh. Exits 1, naming each missing directory and what to do.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

doc=docs/architecture.md
fail=0

# The files git tracks or would track (so _output and ignored files do not count), that exist in
# the working tree; outside git, every file.
list_files() {
  { git ls-files --cached --others --exclude-standard -- "$@" 2>/dev/null || find "$@" -type f; } |
    while IFS= read -r f; do [[ -f $f ]] && printf '%s\n' "$f"; done
}
go_sources() { list_files "$@" | grep -E '\.go$' | grep -vE '_test\.go$' || true; }

if [[ ! -f $doc ]]; then
  echo "verify-architecture: $doc is missing: it is the map of the code (one row per pkg/ directory); restore it" >&2
  exit 1
fi

# Every Go package directory of the kubelet and its tools (pkg, internal, fakeruntime, tools, testing) is on the map.
missing=()
while IFS= read -r dir; do
  if ! grep -qF -e "\`$dir\`" -e "\`$dir/\`" -e "| $dir |" -e "| $dir/ |" "$doc"; then
    missing+=("$dir")
  fi
done < <(go_sources pkg internal fakeruntime tools testing | xargs -r -n1 dirname | sort -u)
if ((${#missing[@]} > 0)); then
  echo "verify-architecture: $doc does not name these package directories:"
  printf '  %s\n' "${missing[@]}"
  echo "  → add a row for each to the package table of $doc (\`pkg/<dir>\` | concept | upstream counterpart at"
  echo "    k8s.io/kubernetes v1.36 | what it simplifies), from its doc.go"
  fail=1
fi

if ((fail == 0)); then
  echo "verify-architecture: every package directory of pkg/, internal/, fakeruntime/, tools/ and testing/ is in $doc"
fi
exit $fail

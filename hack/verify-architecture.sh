#!/usr/bin/env bash
# verify-architecture.sh: keep docs/architecture.md and the code's shape true to each other.
#   (a) every directory under pkg/ that holds Go code (a non-test .go file) is named in
#       docs/architecture.md, as `pkg/<dir>` (or `pkg/<dir>/`) in backticks or as a table cell;
#   (b) no non-test .go file under pkg/ or cmd/ is longer than 400 lines (one concept per file).
# Run by hack/verify-all.sh. Exits 1, naming each problem and what to do, if either fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

doc=docs/architecture.md
max_lines=400
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

# (a) every Go package directory under pkg/ is on the map.
missing=()
while IFS= read -r dir; do
  if ! grep -qF -e "\`$dir\`" -e "\`$dir/\`" -e "| $dir |" -e "| $dir/ |" "$doc"; then
    missing+=("$dir")
  fi
done < <(go_sources pkg | xargs -r -n1 dirname | sort -u)
if ((${#missing[@]} > 0)); then
  echo "verify-architecture: $doc does not name these package directories:"
  printf '  %s\n' "${missing[@]}"
  echo "  → add a row for each to the package table of $doc (\`pkg/<dir>\` | concept | upstream counterpart at"
  echo "    k8s.io/kubernetes v1.36 | what it simplifies), from its doc.go"
  fail=1
fi

# (b) no file past the size where it stops being one concept.
long=()
while IFS= read -r f; do
  n=$(wc -l <"$f")
  if ((n > max_lines)); then long+=("$f: $n lines"); fi
done < <(go_sources pkg cmd | sort)
if ((${#long[@]} > 0)); then
  echo "verify-architecture: these Go files are longer than $max_lines lines:"
  printf '  %s\n' "${long[@]}"
  echo "  → split each by concept, as upstream splits kubelet.go / kubelet_pods.go / pod_workers.go"
  echo "    (tests do not count; move a second concept into a file of its own, same package)"
  fail=1
fi

if ((fail == 0)); then
  echo "verify-architecture: every pkg/ directory is in $doc; no Go file under pkg/ or cmd/ is over $max_lines lines"
fi
exit $fail

#!/usr/bin/env bash
# verify-imports.sh: keep the direction of imports between the repo's trees (docs/architecture.md,
# "The layout"). Test files do not count: a test may use any helper.
#   pkg/          the kubelet: imports pkg/ and internal/ only (never a tool's internals)
#   internal/     support the kubelet links (journal, logsafe): imports internal/ only
#   fakeruntime/  the built-in CRI runtime, a project of its own: imports internal/ only
#   tools/, testing/, cmd/: may import anything above
# Run by hack/verify-all.sh. Exits 1, naming each import that runs the wrong way.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
m=$(go list -m)
fail=0
while read -r pkg imports; do
  dir=${pkg#"$m"/}
  case $dir in
    pkg/*) allowed='^(pkg|internal)/' ;;
    internal/* | fakeruntime | fakeruntime/*) allowed='^internal/' ;;
    *) continue ;;
  esac
  for imp in $imports; do
    [[ $imp == "$m"/* ]] || continue
    if [[ ! ${imp#"$m"/} =~ $allowed ]]; then
      echo "verify-imports: $dir imports ${imp#"$m"/}"
      fail=1
    fi
  done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
if ((fail)); then
  echo "  → the kubelet (pkg/) must not depend on a tool: define a small interface in pkg/ and let cmd/"
  echo "    pass the tool in (as the fake runtime is injected into pkg/kubelet), or move the shared code to internal/"
  exit 1
fi
echo "verify-imports: pkg/ imports only pkg/ and internal/; internal/ and fakeruntime/ only internal/"

#!/usr/bin/env bash
# verify-shell.sh: shellcheck every shell script of the repo — the *.sh files and the scripts
# without an extension whose first line runs bash or sh (.ci/run) — following the files they
# source. shellcheck is Debian's package (hack/tools/install.sh shellcheck installs it).
# vm.yaml's embedded scripts are checked by hack/verify-vm.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
shellcheck=$(hack/tools/install.sh shellcheck)

# The files git tracks or would track (a fresh clone's, plus new ones not yet added); outside git,
# every file.
list_files() {
  git ls-files --cached --others --exclude-standard 2>/dev/null || find . -type f -not -path './.git/*'
}
scripts=()
while IFS= read -r f; do
  [[ -f $f ]] || continue
  if [[ $f == *.sh ]] || head -n1 "$f" | grep -E '^#!(/usr/bin/env |/bin/|/usr/bin/)(ba)?sh' >/dev/null; then
    scripts+=("$f")
  fi
done < <(list_files)
if ((${#scripts[@]} == 0)); then
  echo "verify-shell: found no shell scripts; is this the repo?" >&2
  exit 1
fi
"$shellcheck" --external-sources "${scripts[@]}"
echo "shellcheck $("$shellcheck" --version | awk '/^version:/ { print $2 }'): ${#scripts[@]} scripts clean: ${scripts[*]}"

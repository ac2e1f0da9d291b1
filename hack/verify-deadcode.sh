#!/usr/bin/env bash
# verify-deadcode.sh [MODULE_DIR...]: no function of ours that the program never calls.
#
# Runs golang.org/x/tools/cmd/deadcode (pinned in hack/tools/go.mod) over every main package of
# each module — cmd/minikubelet, hack/bench, labs/check … of the root module, and the mains of
# hack/cluster, hack/conformance, hack/kubeadm and hack/tools (default: all five modules). deadcode builds the
# call graph from those mains (Rapid Type Analysis) and lists each function none of them can
# reach. Tests do not count: a function only tests call is dead (issue #29), so deadcode runs
# without -test. The exceptions are test-helper packages (under test/, or named *test like
# testing/exectest), written for the tests: they are listed, one a line with the reason, in
# hack/verify-deadcode.allow.
#
# Exits 1, naming each unreachable function and what to do with it, or when an entry of the allow
# list names a directory that no longer exists. Run by hack/verify-all.sh.
#
# What deadcode cannot see: an exported method of a type that reaches an interface value counts as
# reachable through reflection (reflect's Method by name, which cobra's text/template brings in),
# so an exported method only tests call may still pass: `deadcode -whylive=pkg.Type.Method ./...`
# answers "reachable only through reflection" for one. Grep for its callers before keeping it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
allow_file=hack/verify-deadcode.allow
deadcode=$(hack/tools/install.sh deadcode)
module_prefix=$(go list -m)/ # github.com/minikubelet/minikubelet/
if (($# > 0)); then modules=("$@"); else modules=(. hack/cluster hack/conformance hack/kubeadm hack/tools); fi
fail=0

# The allow list: "<package directory> <reason>" per line; # starts a comment.
allowed=()
while read -r dir reason; do
  [[ -z $dir || $dir == \#* ]] && continue
  if [[ -z $reason ]]; then
    echo "verify-deadcode: $allow_file: $dir has no reason: say after it why its functions need no caller in the program" >&2
    fail=1
  fi
  if [[ ! -d $dir ]]; then
    echo "verify-deadcode: $allow_file names $dir, which does not exist: remove the line" >&2
    fail=1
  fi
  if [[ $dir != test/* && $dir != *test ]]; then
    echo "verify-deadcode: $allow_file names $dir: only test-helper packages (under test/, or named like exectest) may be listed; make its functions reachable or delete them" >&2
    fail=1
  fi
  allowed+=("${dir%/}")
done <"$allow_file"

is_allowed() {
  local dir=$1 a
  for a in "${allowed[@]}"; do [[ $dir == "$a" ]] && return 0; done
  return 1
}

# One line per dead function: import path, tab, file:line:column, tab, name (Type.Method for a
# method). deadcode prints paths relative to the module directory it runs in.
template='{{range .Funcs}}{{printf "%s\t%s:%d:%d\t%s\n" $.Path .Position.File .Position.Line .Position.Col .Name}}{{end}}'
dead=()
for mod in "${modules[@]}"; do
  if ! out=$(cd "$mod" && "$deadcode" -f "$template" ./...); then
    echo "verify-deadcode: deadcode failed in module $mod (does it build? go build ./...)" >&2
    fail=1
    continue
  fi
  while IFS=$'\t' read -r pkg pos name; do
    [[ -z $pkg ]] && continue
    dir=${pkg#"$module_prefix"}
    [[ $dir == "$pkg" ]] && dir=. # the root module's own path
    is_allowed "$dir" && continue
    pos=${pos#"$root"/}
    [[ $mod != . && $pos != /* ]] && pos=$mod/$pos
    dead+=("$pos: $name")
  done <<<"$out"
done

if ((${#dead[@]} > 0)); then
  echo "verify-deadcode: ${#dead[@]} function(s) that no main package of ours can reach:"
  printf '  %s\n' "${dead[@]}"
  cat <<'EOF'
For each one:
  - nothing calls it: delete it;
  - only tests call it: delete it and let the test use what the program uses, or wire it in where
    upstream uses it if the kubelet should; a helper only tests need goes into a _test.go file;
  - it is in a test-helper package (under test/, or named *test like testing/exectest): add the
    package directory and the reason to hack/verify-deadcode.allow.
(deadcode -whylive=<import path>.<Func> ./... shows why a function you expected here is reachable.)
EOF
  fail=1
fi
if ((fail == 0)); then
  echo "deadcode $(cd hack/tools && go list -m -f '{{.Version}}' golang.org/x/tools): every function is reachable from a main package (modules: ${modules[*]})"
fi
exit "$fail"

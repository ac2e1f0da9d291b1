#!/usr/bin/env bash
# kind-down.sh: delete the kind cluster hack/kind-up.sh made, and its files in _output/kind (its
# token, CA and minikubelet's run directory belong to that cluster only).
#
# Usage: hack/kind-down.sh [--name NAME]
# Environment: KIND_CLUSTER_NAME (minikubelet), KIND_DIR (_output/kind), KIND (kind from PATH).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
name=${KIND_CLUSTER_NAME:-minikubelet}
kind_dir=${KIND_DIR:-_output/kind}
while (($#)); do
  case $1 in
    --name) name=${2:?--name needs a value}; shift 2 ;;
    *) echo "kind-down: unknown argument $1 (usage: hack/kind-down.sh [--name NAME])" >&2; exit 1 ;;
  esac
done
kind=${KIND:-$(command -v kind || true)}
if [[ -z $kind ]]; then
  echo "kind-down: kind is not on PATH (export KIND=\$(hack/tools/install.sh kind) builds the pinned one)" >&2
  exit 1
fi
# kind delete cluster succeeds when there is no such cluster, so this is safe to run twice.
"$kind" delete cluster --name "$name"
rm -rf "$kind_dir"
echo "kind cluster \"$name\" deleted; removed $kind_dir."

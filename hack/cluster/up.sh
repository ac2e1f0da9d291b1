#!/usr/bin/env bash
# up.sh / down / status: build the control plane binaries if needed, then run the cluster program.
# Usage: hack/cluster/up.sh up|down|status [--state-dir DIR] [flags of `cluster up`]
#        hack/cluster/up.sh stop-component|start-component NAME [--state-dir DIR]   (e.g. kube-apiserver)
#        hack/cluster/up.sh metrics-server [--state-dir DIR] [--metric-resolution D] [--foreground]
#            metrics-server (built by metrics-server.sh) on the running control plane, registered
#            as the v1beta1.metrics.k8s.io APIService: `kubectl top` works; `down` stops it too
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
verb=${1:?usage: up.sh up|down|status|stop-component NAME|start-component NAME|metrics-server [flags]}; shift
prog_dir=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/k8s/v1.36.3
args=()
if [[ $verb == up ]]; then
  bin_dir=$("$here/build.sh")
  args+=(--bin-dir "$bin_dir")
elif [[ $verb == metrics-server ]]; then
  args+=(--metrics-server-bin "$("$here/metrics-server.sh")")
fi
# Build the small cluster program itself (seconds; cached by the go build cache).
mkdir -p "$prog_dir"
(cd "$here" && go build -o "$prog_dir/cluster.$$" . && mv "$prog_dir/cluster.$$" "$prog_dir/cluster")
exec "$prog_dir/cluster" "$verb" "${args[@]}" "$@"

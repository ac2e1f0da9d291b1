#!/usr/bin/env bash
# debug.sh: what `make debug` does. Builds bin/minikubelet-debug without optimisations and inlining
# (-gcflags=all=-N -l: every variable readable, every line a place to stop), then runs the node of
# `make run` — hack/run.sh: the same control plane, flags and files — under a headless Delve
# (pinned in hack/tools/go.mod) on 127.0.0.1:$DLV_PORT. minikubelet waits before its first
# instruction until a debugger attaches and says continue.
#
# Environment: that of hack/run.sh (CLUSTER, CLUSTER_DIR, NODE_NAME, ROOT_DIR, KUBELET_PORT, ARGS),
# DLV_PORT (2345), LDFLAGS (the Makefile passes its version stamping; by hand the same is computed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DLV_PORT=${DLV_PORT:-2345}
if [[ -z ${LDFLAGS:-} ]]; then
  LDFLAGS="-X github.com/minikubelet/minikubelet/pkg/version.gitVersion=$(git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)"
  LDFLAGS+=" -X github.com/minikubelet/minikubelet/pkg/version.gitCommit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi

echo "building bin/minikubelet-debug (-gcflags=all=-N -l)" >&2
go build -gcflags='all=-N -l' -ldflags "$LDFLAGS" -o bin/minikubelet-debug ./cmd/minikubelet
dlv=$(hack/tools/install.sh dlv)

cat <<MSG
minikubelet runs under Delve, stopped before main, until a debugger attaches and continues:
  terminal  $dlv connect 127.0.0.1:$DLV_PORT
              (dlv) break kubelet.(*Kubelet).syncLoopIteration
              (dlv) continue
            'quit -c' leaves it running; 'quit' asks whether to stop it.
  VS Code   Run and Debug → "minikubelet: attach to make debug" (.vscode/launch.json, port 2345)
  GoLand    Run → Edit Configurations → + → Go Remote: host 127.0.0.1, port $DLV_PORT
A breakpoint pauses every goroutine; with --debug-keepalive a helper process renews the node's Lease
meanwhile, so the node stays Ready. Ctrl-C here stops Delve and minikubelet.

MSG
# hack/run.sh brings the control plane up and appends the flags of `make run` to this command.
MINIKUBELET_CMD="$dlv exec --headless --listen=127.0.0.1:$DLV_PORT --api-version=2 --accept-multiclient --continue=false bin/minikubelet-debug --" \
  ARGS="${ARGS:+$ARGS }--debug-keepalive" \
  exec hack/run.sh

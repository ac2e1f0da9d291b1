#!/usr/bin/env bash
# run.sh: what `make run` does. Brings the local control plane up if it is not running, then runs
# bin/minikubelet in the foreground against its bootstrap kubeconfig, with its files under
# _output/run. Ctrl-C stops minikubelet (the control plane keeps running; `make cluster-down`).
#
# Environment: CLUSTER (local; kind comes later), CLUSTER_DIR (_output/cluster), NODE_NAME
# (default: the hostname), ROOT_DIR (_output/run), KUBELET_ADDRESS (127.0.0.1: the local control
# plane reaches the kubelet API on loopback), KUBELET_PORT (10250), extra flags in ARGS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLUSTER=${CLUSTER:-local}
CLUSTER_DIR=${CLUSTER_DIR:-_output/cluster}
ROOT_DIR=${ROOT_DIR:-_output/run}
NODE_NAME=${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
KUBELET_PORT=${KUBELET_PORT:-10250}

if [[ $CLUSTER != local ]]; then
  echo "CLUSTER=$CLUSTER is not supported yet (kind arrives with the kind/Lima issue); use CLUSTER=local" >&2
  exit 1
fi
hack/cluster/up.sh up --state-dir "$CLUSTER_DIR" >/dev/null
# A new control plane has a new CA and port: credentials from an earlier one cannot work. Start the
# node afresh (a new TLS bootstrap) when the CA in its kubeconfig is not the cluster's.
ca() { grep -m1 'certificate-authority-data' "$1" 2>/dev/null | awk '{print $2}'; }
if [[ -f $ROOT_DIR/kubeconfig && "$(ca "$ROOT_DIR/kubeconfig")" != "$(ca "$CLUSTER_DIR/bootstrap.kubeconfig")" ]]; then
  echo "The local control plane was recreated since $ROOT_DIR was used; removing it to join afresh." >&2
  rm -rf "$ROOT_DIR"
fi
kubectl=$(hack/cluster/build.sh)/kubectl
admin=$(cd "$CLUSTER_DIR" && pwd)/admin.kubeconfig
cat <<MSG
Local control plane is up. minikubelet joins it as node "$NODE_NAME" (files in $ROOT_DIR).
In another terminal:
  $kubectl --kubeconfig $admin get nodes
  $kubectl --kubeconfig $admin describe node $NODE_NAME
Ctrl-C stops minikubelet; 'make cluster-down' stops the control plane.

MSG
exec bin/minikubelet \
  --bootstrap-kubeconfig "$CLUSTER_DIR/bootstrap.kubeconfig" \
  --root-dir "$ROOT_DIR" \
  --hostname-override "$NODE_NAME" \
  --node-ip 127.0.0.1 \
  --address "${KUBELET_ADDRESS:-127.0.0.1}" \
  --port "$KUBELET_PORT" \
  ${ARGS:-}

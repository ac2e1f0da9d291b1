#!/usr/bin/env bash
# run.sh: what `make run` does: run bin/minikubelet in the foreground, joined to a cluster through
# its bootstrap kubeconfig. Ctrl-C stops minikubelet; the cluster keeps running.
#
#   CLUSTER=local (default)  brings the local control plane up if it is not running; files under
#                            _output/run ('make cluster-down' stops the control plane), and with
#                            METRICS_SERVER=1 (default) metrics-server too, for `kubectl top`
#   CLUSTER=kind             the kind cluster of hack/kind-up.sh (_output/kind/bootstrap.kubeconfig);
#                            files under _output/kind/run ('hack/kind-down.sh' deletes the cluster)
#
# Environment: CLUSTER, CLUSTER_DIR (_output/cluster), KIND_DIR (_output/kind), NODE_NAME (default:
# the hostname), ROOT_DIR (_output/run, or _output/kind/run for kind), NODE_IP (local: 127.0.0.1;
# kind: the host's address on Docker's kind network, recorded by hack/kind-up.sh), KUBELET_ADDRESS
# (NODE_IP: where the API server reaches the kubelet API), KUBELET_PORT (10250), DEBUG_ADDRESS
# (127.0.0.1:10256: the journal, /debug/journal/ui, without authentication), KUBECTL (kind:
# kubectl from PATH), extra flags in ARGS, MINIKUBELET_CMD (bin/minikubelet; hack/debug.sh puts Delve
# in front of it), METRICS_SERVER (local only; 1, the default, or 0 to skip it), CLUSTER_DNS
# (10.96.0.10) and CLUSTER_DOMAIN (cluster.local): what kubeadm and kind give every kubelet, so pods
# get a cluster /etc/resolv.conf (kind's CoreDNS answers there; the local cluster runs no DNS), and
# no ClusterFirst pod gets upstream's MissingClusterDNS Warning.
#
# metrics-server (hack/cluster/metricsserver.go) verifies each kubelet's serving certificate against
# the cluster CA, so with METRICS_SERVER=1 the node gets its certificate from a kubelet-serving CSR
# (--rotate-server-certificates) instead of signing one itself, and this script approves that one
# CSR — the node's own, from the kubelet it starts — as an admin would with `kubectl certificate
# approve`. Nothing approves serving CSRs in general: a node may ask for any IP address in one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CLUSTER=${CLUSTER:-local}
METRICS_SERVER=${METRICS_SERVER:-1}
NODE_NAME=${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
KUBELET_PORT=${KUBELET_PORT:-10250}

case $CLUSTER in
  local)
    CLUSTER_DIR=${CLUSTER_DIR:-_output/cluster}
    ROOT_DIR=${ROOT_DIR:-_output/run}
    NODE_IP=${NODE_IP:-127.0.0.1}
    hack/cluster/up.sh up --state-dir "$CLUSTER_DIR" >/dev/null
    case $METRICS_SERVER in
      1) hack/cluster/up.sh metrics-server --state-dir "$CLUSTER_DIR" >/dev/null ;;
      0) ;;
      *) echo "METRICS_SERVER=$METRICS_SERVER: use 1 (start metrics-server, the default) or 0 (skip it)" >&2; exit 1 ;;
    esac
    bootstrap=$CLUSTER_DIR/bootstrap.kubeconfig
    kubectl=$(hack/cluster/build.sh)/kubectl
    admin=$(cd "$CLUSTER_DIR" && pwd)/admin.kubeconfig
    what="Local control plane is up"
    recreated="The local control plane was recreated"
    stop="'make cluster-down' stops the control plane"
    ;;
  kind)
    KIND_DIR=${KIND_DIR:-_output/kind}
    ROOT_DIR=${ROOT_DIR:-$KIND_DIR/run}
    bootstrap=$KIND_DIR/bootstrap.kubeconfig
    if [[ ! -f $bootstrap ]]; then
      echo "CLUSTER=kind: $bootstrap does not exist. Create the kind cluster and its bootstrap token first:" >&2
      echo "  hack/kind-up.sh" >&2
      exit 1
    fi
    if [[ -z ${NODE_IP:-} && -f $KIND_DIR/node-ip ]]; then NODE_IP=$(<"$KIND_DIR/node-ip"); fi
    if [[ -z ${NODE_IP:-} ]]; then
      echo "CLUSTER=kind: no node IP: $KIND_DIR/node-ip is missing. Run hack/kind-up.sh again, or set NODE_IP to" >&2
      echo "an address of this host that the kind node's containers can reach." >&2
      exit 1
    fi
    kubectl=${KUBECTL:-kubectl}
    admin=$(cd "$KIND_DIR" && pwd)/admin.kubeconfig
    if command -v "$kubectl" >/dev/null &&
      ! "$kubectl" --kubeconfig "$admin" --request-timeout 10s get --raw /readyz >/dev/null 2>&1; then
      echo "CLUSTER=kind: the kind cluster in $KIND_DIR does not answer. Is it running (docker ps)? Run hack/kind-up.sh" >&2
      echo "to create it again (hack/kind-down.sh first if it is broken)." >&2
      exit 1
    fi
    what="The kind cluster is up"
    METRICS_SERVER=0 # kind users install metrics-server in the cluster, as usual
    recreated="The kind cluster was recreated"
    stop="'hack/kind-down.sh' deletes the kind cluster"
    ;;
  *)
    echo "CLUSTER=$CLUSTER is not supported: use CLUSTER=local (the default) or CLUSTER=kind" >&2
    exit 1
    ;;
esac

# approve_serving_csr PID: while PID (the kubelet, which this shell becomes) runs and has no serving
# certificate yet, approve the pending kubelet-serving CSR of this node: only this node's own.
approve_serving_csr() {
  local pid=$1 csrs name user conds
  local list='{range .items[?(@.spec.signerName=="kubernetes.io/kubelet-serving")]}{.metadata.name} {.spec.username} {.status.conditions[*].type}{"\n"}{end}'
  while kill -0 "$pid" 2>/dev/null && [[ ! -e $ROOT_DIR/pki/kubelet-server-current.pem ]]; do
    csrs=$("$kubectl" --kubeconfig "$admin" get csr -o jsonpath="$list" 2>/dev/null) || csrs=""
    while read -r name user conds; do
      if [[ $user == "system:node:$NODE_NAME" && -z $conds ]] &&
        "$kubectl" --kubeconfig "$admin" certificate approve "$name" >/dev/null; then
        echo "hack/run.sh: approved $name, the serving certificate of node $NODE_NAME (metrics-server verifies it)" >&2
      fi
    done <<<"$csrs"
    sleep 2
  done
}
# A new cluster has a new CA (and port): credentials from an earlier one cannot work. Start the node
# afresh (a new TLS bootstrap) when the CA in its kubeconfig is not the cluster's.
ca() { grep -m1 'certificate-authority-data' "$1" 2>/dev/null | awk '{print $2}'; }
if [[ -f $ROOT_DIR/kubeconfig && "$(ca "$ROOT_DIR/kubeconfig")" != "$(ca "$bootstrap")" ]]; then
  echo "$recreated since $ROOT_DIR was used; removing it to join afresh." >&2
  rm -rf "$ROOT_DIR"
fi
serving=()
if [[ $METRICS_SERVER == 1 ]]; then
  serving=(--rotate-server-certificates)
  approve_serving_csr "$$" &
fi
cat <<MSG
$what. minikubelet joins it as node "$NODE_NAME" (files in $ROOT_DIR).
In another terminal:
  $kubectl --kubeconfig $admin get nodes
  $kubectl --kubeconfig $admin describe node $NODE_NAME
MSG
if [[ $METRICS_SERVER == 1 ]]; then
  echo "  $kubectl --kubeconfig $admin top node      (and top pod -A: metrics-server scrapes every 15 s)"
fi
cat <<MSG
  bin/minikubelet journal --follow     (or http://${DEBUG_ADDRESS:-127.0.0.1:10256}/debug/journal/ui)
Ctrl-C stops minikubelet; $stop.

MSG
# shellcheck disable=SC2086 # MINIKUBELET_CMD and ARGS hold several words: split on purpose
exec ${MINIKUBELET_CMD:-bin/minikubelet} \
  --bootstrap-kubeconfig "$bootstrap" \
  --root-dir "$ROOT_DIR" \
  --hostname-override "$NODE_NAME" \
  --node-ip "$NODE_IP" \
  --address "${KUBELET_ADDRESS:-$NODE_IP}" \
  --port "$KUBELET_PORT" \
  --debug-address "${DEBUG_ADDRESS:-127.0.0.1:10256}" \
  --cluster-dns "${CLUSTER_DNS:-10.96.0.10}" --cluster-domain "${CLUSTER_DOMAIN:-cluster.local}" \
  "${serving[@]}" \
  ${ARGS:-}

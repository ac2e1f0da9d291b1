#!/usr/bin/env bash
# kind-up.sh: a kind cluster for minikubelet to join, the way a kubelet joins a kubeadm cluster.
#
#   1. write the kind config (_output/kind/kind-config.yaml) and create the cluster, or reuse it
#   2. make sure the TLS bootstrap RBAC exists (kubeadm made it; applying it again changes nothing)
#   3. create a bootstrap token through the API: a Secret of type bootstrap.kubernetes.io/token
#   4. write _output/kind/admin.kubeconfig and _output/kind/bootstrap.kubeconfig (the cluster's CA,
#      its API server as this host reaches it, the token)
#   5. record the address the API server reaches the node's kubelet API on (_output/kind/node-ip)
#   6. print the `make run CLUSTER=kind` line
#
# Usage: hack/kind-up.sh [--name NAME] [--node-monitor-grace-period DURATION] [--image IMAGE]
# Environment (the flags win):
#   KIND_CLUSTER_NAME               cluster name (minikubelet); kind itself reads it too
#   KIND_NODE_MONITOR_GRACE_PERIOD  e.g. 5m: how long kube-controller-manager waits for a silent node
#                                   before NotReady (default: its own default). Set it when you
#                                   debug with Delve: a breakpoint pauses the heartbeat too.
#   KIND_NODE_IMAGE                 node image (default: the one pinned in hack/kind/lib.sh)
#   KIND_TOKEN_TTL_HOURS            bootstrap token lifetime (24, as kubeadm's default)
#   KIND_DIR                        where the files go (_output/kind)
#   KIND, KUBECTL                   the binaries to use (default: from PATH)
# Run it again at any time: it reuses the cluster and writes a fresh token. hack/kind-down.sh
# deletes the cluster.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=hack/kind/lib.sh
source hack/kind/lib.sh

name=${KIND_CLUSTER_NAME:-minikubelet}
grace=${KIND_NODE_MONITOR_GRACE_PERIOD:-}
image=${KIND_NODE_IMAGE:-$KIND_NODE_IMAGE_PINNED}
ttl_hours=${KIND_TOKEN_TTL_HOURS:-24}
kind_dir=${KIND_DIR:-_output/kind}

usage() { sed -n '2,/^set -euo/p' hack/kind-up.sh | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { echo "kind-up: $*" >&2; exit 1; }
while (($#)); do
  case $1 in
    --name) name=${2:?--name needs a value}; shift 2 ;;
    --node-monitor-grace-period) grace=${2:?--node-monitor-grace-period needs a value}; shift 2 ;;
    --image) image=${2:?--image needs a value}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument $1 (see hack/kind-up.sh --help)" ;;
  esac
done
if [[ -n $grace && ! $grace =~ ^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$ ]]; then
  die "node-monitor-grace-period \"$grace\" is not a Go duration; write it like 40s, 5m or 1h30m"
fi
if [[ ! $ttl_hours =~ ^[1-9][0-9]*$ ]]; then
  die "KIND_TOKEN_TTL_HOURS=\"$ttl_hours\" is not a whole number of hours"
fi

# --- The tools: kind, kubectl and a running Docker engine.
kind=${KIND:-$(command -v kind || true)}
[[ -n $kind ]] || die "kind is not on PATH. Build the pinned version with
  export KIND=\$(hack/tools/install.sh kind)
or install it: https://kind.sigs.k8s.io/docs/user/quick-start/#installation (or use the Lima VM: limactl start --name minikubelet ./vm.yaml)"
kubectl=${KUBECTL:-$(command -v kubectl || true)}
[[ -n $kubectl ]] || die "kubectl is not on PATH. Install kubectl v1.36 (https://kubernetes.io/docs/tasks/tools/),
or use the one the local control plane builds: export KUBECTL=\$(hack/cluster/build.sh)/kubectl (~10 min the first time)"
command -v docker >/dev/null || die "docker is not on PATH: kind runs its nodes as Docker containers.
Install Docker Engine (https://docs.docker.com/engine/install/) or Docker Desktop, or use the Lima VM: limactl start --name minikubelet ./vm.yaml"
docker info >/dev/null 2>&1 || die "docker cannot reach a Docker engine ('docker info' fails): start the engine
(sudo systemctl start docker; or Docker Desktop), check that your user may use it (the docker group), or use the Lima VM"
pinned=$(awk '$1 == "sigs.k8s.io/kind" && $2 ~ /^v/ { print $2 }' hack/tools/go.mod)
have=$("$kind" version | awk '{ print $2 }')
if [[ $have != "$pinned" ]]; then
  echo "kind-up: warning: kind $have, but minikubelet pins $pinned (hack/tools/go.mod) and its node image is built for that release" >&2
fi

mkdir -p "$kind_dir"
admin=$kind_dir/admin.kubeconfig

# --- 1. The cluster.
# (grep without -q reads all of kind's output: -q would stop early and fail the pipe under pipefail)
if "$kind" get clusters 2>/dev/null | grep -x -- "$name" >/dev/null; then
  echo "kind cluster \"$name\" exists: reusing it (hack/kind-down.sh first for a new one with a new config)."
  if [[ -n $grace ]]; then
    echo "kind-up: warning: the node-monitor-grace-period of an existing cluster stays as it was created" >&2
  fi
else
  kind_config "$image" "$grace" >"$kind_dir/kind-config.yaml"
  echo "Creating kind cluster \"$name\" (node image $image${grace:+, node-monitor-grace-period $grace})."
  "$kind" create cluster --name "$name" --config "$kind_dir/kind-config.yaml" --wait 3m
fi
kind_kubeconfig=$(mktemp "${TMPDIR:-/tmp}/kind-kubeconfig.XXXXXX")
trap 'rm -f "$kind_kubeconfig"' EXIT
"$kind" get kubeconfig --name "$name" >"$kind_kubeconfig"
"$kubectl" --kubeconfig "$kind_kubeconfig" --request-timeout 20s get --raw /readyz >/dev/null ||
  die "the API server of kind cluster \"$name\" does not answer; is its container running? (docker ps; or hack/kind-down.sh and run this again)"

# --- 2. The TLS bootstrap RBAC. Server-side apply: it leaves kubeadm's identical objects as they are.
node_bootstrap_rbac "$kubectl" |
  "$kubectl" --kubeconfig "$kind_kubeconfig" apply --server-side --field-manager minikubelet-kind-up -f - >/dev/null

# --- 3. A bootstrap token, created through the API.
token_id=$(random_token_part 6)
token_secret=$(random_token_part 16)
token_secret_manifest "$kubectl" "$token_id" "$token_secret" "$(token_expiration "$ttl_hours")" |
  "$kubectl" --kubeconfig "$kind_kubeconfig" create -f - >/dev/null
echo "Created bootstrap token $token_id (Secret kube-system/bootstrap-token-$token_id, valid ${ttl_hours}h)."

# --- 4. The kubeconfigs.
write_kubeconfigs "$kubectl" "$kind_kubeconfig" "$kind_dir" "$token_id.$token_secret"

# --- 5. The node's address. The API server runs in a container on Docker's "kind" network; for
# exec, logs and port-forward it dials the node's InternalIP. That network's gateway is this host.
node_ip=""
for gateway in $(docker network inspect kind -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' 2>/dev/null || true); do
  if [[ $gateway =~ ^[0-9]+(\.[0-9]+){3}$ ]]; then node_ip=$gateway; break; fi
done
if [[ -n $node_ip ]]; then
  echo "$node_ip" >"$kind_dir/node-ip"
else
  rm -f "$kind_dir/node-ip"
  echo "kind-up: warning: no IPv4 gateway on Docker network \"kind\"; set NODE_IP for make run to an address of this host the kind node can reach" >&2
fi

# --- 6. What to do next.
run="make run CLUSTER=kind"
if [[ $kind_dir != _output/kind ]]; then run="KIND_DIR=$kind_dir $run"; fi
cat <<MSG

kind cluster "$name" is ready. Files in $kind_dir:
  admin.kubeconfig       cluster-admin (also in your kubeconfig as context kind-$name)
  bootstrap.kubeconfig   minikubelet's --bootstrap-kubeconfig (token $token_id, CA of the cluster)
  node-ip                ${node_ip:-(none)}: where the API server reaches minikubelet's kubelet API

Join minikubelet to it:
  $run
Then, in another terminal:
  kubectl --kubeconfig $admin get nodes -o wide
Delete the cluster with hack/kind-down.sh.
MSG

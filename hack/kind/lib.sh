#!/usr/bin/env bash
# lib.sh: the steps of hack/kind-up.sh that need no Docker, as functions, so that hack/kind/test.sh
# can run them offline (against a fake kind kubeconfig). Sourced by both; it runs nothing itself.
#
#   kind_config IMAGE [GRACE]                  the kind cluster config, on stdout
#   random_token_part N                        N random characters of [a-z0-9]
#   token_expiration HOURS                     the RFC 3339 UTC time HOURS from now
#   token_secret_manifest KUBECTL ID SECRET EXPIRATION   the bootstrap token Secret, on stdout
#   node_bootstrap_rbac KUBECTL                the TLS bootstrap ClusterRoleBindings, on stdout
#   write_kubeconfigs KUBECTL KIND_KUBECONFIG OUT_DIR TOKEN
#                                              OUT_DIR/admin.kubeconfig and bootstrap.kubeconfig
#
# The objects are the ones `kubeadm init` makes and hack/cluster/bootstrap.go makes for the local
# control plane: a node joins a kind cluster the way it joins any kubeadm cluster.

# The pinned kind release and its node image. The digest pins an image built for that release: kind
# v0.33.0's release notes list kindest/node v1.37.0, v1.36.4, v1.35.8 and v1.34.11, and no v1.36.3,
# so we take v1.36.4 — the same minor as our client libraries (v0.36.3) and the local control plane.
# shellcheck disable=SC2034 # used by hack/kind-up.sh and hack/kind/test.sh, which source this file
KIND_NODE_IMAGE_PINNED="kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed"

# The extra group kubeadm gives node bootstrap tokens; the RBAC below is bound to it.
BOOTSTRAP_GROUP="system:bootstrappers:kubeadm:default-node-token"

# kind_config IMAGE [GRACE]: print a kind Cluster config (kind.x-k8s.io/v1alpha4) with one
# control-plane node of IMAGE. With GRACE (a Go duration such as 5m), kube-controller-manager waits
# that long for a silent node before it marks it NotReady (--node-monitor-grace-period) — time to
# sit at a Delve breakpoint, which pauses minikubelet's heartbeat too.
kind_config() {
  local image=$1 grace=${2:-}
  cat <<EOF
# Written by hack/kind-up.sh; kind create cluster --config reads it.
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
  image: "$image"
EOF
  if [[ -n $grace ]]; then
    # No apiVersion in the patch: kind then applies it to whichever kubeadm API the node image uses,
    # turning this map into v1beta4's list of {name, value} where needed.
    cat <<EOF
kubeadmConfigPatches:
- |
  kind: ClusterConfiguration
  controllerManager:
    extraArgs:
      node-monitor-grace-period: "$grace"
EOF
  fi
}

# random_token_part N: print N random characters of [a-z0-9], the alphabet of bootstrap tokens
# ("[a-z0-9]{6}.[a-z0-9]{16}").
random_token_part() {
  local n=$1 s=""
  while ((${#s} < n)); do
    # head reads a fixed amount, so no pipe is cut short (that would fail under pipefail).
    s+=$(head -c 64 /dev/urandom | LC_ALL=C tr -dc 'a-z0-9')
  done
  printf '%s\n' "${s:0:n}"
}

# token_expiration HOURS: print the UTC time HOURS from now in RFC 3339 (GNU date, or BSD date on
# macOS).
token_expiration() {
  local hours=$1
  date -u -d "+${hours} hours" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null ||
    date -u -v "+${hours}H" +%Y-%m-%dT%H:%M:%SZ
}

# token_secret_manifest KUBECTL ID SECRET EXPIRATION: print the bootstrap token Secret as `kubeadm
# token create` makes it: kube-system/bootstrap-token-ID, type bootstrap.kubernetes.io/token. The
# API server's bootstrap token authenticator reads it; the token is "ID.SECRET".
token_secret_manifest() {
  local kubectl=$1 id=$2 secret=$3 expiration=$4
  # --dry-run=client: kubectl only builds and prints the object. --kubeconfig /dev/null: it needs no
  # cluster for that.
  "$kubectl" --kubeconfig /dev/null --namespace kube-system \
    create secret generic "bootstrap-token-$id" --type bootstrap.kubernetes.io/token \
    --from-literal "description=minikubelet node bootstrap token (hack/kind-up.sh)" \
    --from-literal "token-id=$id" \
    --from-literal "token-secret=$secret" \
    --from-literal "expiration=$expiration" \
    --from-literal "usage-bootstrap-authentication=true" \
    --from-literal "usage-bootstrap-signing=true" \
    --from-literal "auth-extra-groups=$BOOTSTRAP_GROUP" \
    --dry-run=client -o yaml
}

# node_bootstrap_rbac KUBECTL: print the ClusterRoleBindings of the TLS bootstrap flow, named as
# `kubeadm init` names them (so applying them to a kubeadm cluster changes nothing).
node_bootstrap_rbac() {
  local kubectl=$1
  local -a crb=("$kubectl" --kubeconfig /dev/null create clusterrolebinding --dry-run=client -o yaml)
  # The token may create CSRs and watch them.
  "${crb[@]}" kubeadm:kubelet-bootstrap --clusterrole system:node-bootstrapper --group "$BOOTSTRAP_GROUP"
  echo ---
  # kube-controller-manager's csrapprover approves a token's CSR for a node client certificate.
  "${crb[@]}" kubeadm:node-autoapprove-bootstrap \
    --clusterrole system:certificates.k8s.io:certificatesigningrequests:nodeclient --group "$BOOTSTRAP_GROUP"
  echo ---
  # ... and a node's CSR to renew its own client certificate (rotation).
  "${crb[@]}" kubeadm:node-autoapprove-certificate-rotation \
    --clusterrole system:certificates.k8s.io:certificatesigningrequests:selfnodeclient --group system:nodes
}

# write_kubeconfigs KUBECTL KIND_KUBECONFIG OUT_DIR TOKEN: from the kubeconfig kind wrote (`kind get
# kubeconfig`: the cluster's CA, and its API server as the host reaches it), write
#   OUT_DIR/admin.kubeconfig      a copy of it (cluster-admin)
#   OUT_DIR/bootstrap.kubeconfig  the same server and CA, with the bootstrap TOKEN as the user: what
#                                 minikubelet's --bootstrap-kubeconfig expects
# Both 0600, each replaced atomically.
write_kubeconfigs() {
  local kubectl=$1 src=$2 out=$3 token=$4 server ca
  server=$("$kubectl" config view --kubeconfig "$src" --raw --minify -o 'jsonpath={.clusters[0].cluster.server}') || return
  ca=$("$kubectl" config view --kubeconfig "$src" --raw --minify -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}') || return
  if [[ $server != https://* || -z $ca ]]; then
    echo "kind-up: $src has no https server and embedded CA in its current context; is it a kind kubeconfig?" >&2
    return 1
  fi
  mkdir -p "$out"
  (
    umask 077
    cp "$src" "$out/admin.kubeconfig.tmp"
    cat >"$out/bootstrap.kubeconfig.tmp" <<EOF
# Written by hack/kind-up.sh: minikubelet's --bootstrap-kubeconfig for the kind cluster. Trust comes
# from the cluster's CA below; the user is a bootstrap token, good only for the TLS bootstrap.
apiVersion: v1
kind: Config
clusters:
- name: kind
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: kubelet-bootstrap
  user:
    token: $token
contexts:
- name: kubelet-bootstrap@kind
  context:
    cluster: kind
    user: kubelet-bootstrap
current-context: kubelet-bootstrap@kind
EOF
  ) || return
  mv "$out/admin.kubeconfig.tmp" "$out/admin.kubeconfig"
  mv "$out/bootstrap.kubeconfig.tmp" "$out/bootstrap.kubeconfig"
}

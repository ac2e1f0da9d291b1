# shellcheck shell=bash
# labs/env.sh: what the labs' commands assume, for a second terminal beside `make run`.
# Source it in the repository's top directory:   source labs/env.sh
#
# It follows hack/run.sh (the same CLUSTER_DIR, ROOT_DIR, NODE_NAME and KUBELET_PORT, with the
# same defaults) and sets:
#   KUBECONFIG   the admin kubeconfig of the local control plane
#   PATH         + kubectl v1.36.3 (built with the control plane) and bin/ (minikubelet)
#   NODE         the node's name (the hostname, lowercased)
#   RUN          the node's --root-dir; SOCK its fake runtime's CRI socket
#   kubelet_api  a function: kubelet_api /metrics — curl the kubelet API as the cluster admin
#   kubelet_ca   a function: prints the path of a file with the CAs that may have issued the
#                node's serving certificate: the cluster CA (make run's default: a CSR-issued
#                certificate, which metrics-server checks) and the node's self-signed kubelet.crt
#                (METRICS_SERVER=0). E.g. curl --cacert "$(kubelet_ca)" https://127.0.0.1:10250/pods
#   crictl       a function: crictl ps — cri-tools' crictl on the node's runtime ($SOCK, or
#                $CRI_ENDPOINT if set); hack/tools/crictl.sh builds it the first time (~3 min)
if [[ ! -f Makefile || ! -d labs ]]; then
  echo "source labs/env.sh from the repository's top directory" >&2
  return 1
fi
labs_abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
LABS_TOP=$PWD
LABS_CLUSTER=$(labs_abs "${CLUSTER_DIR:-_output/cluster}")
export KUBECONFIG=$LABS_CLUSTER/admin.kubeconfig
export PATH=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/k8s/v1.36.3:$PWD/bin:$PATH
NODE=${NODE_NAME:-$(hostname | tr '[:upper:]' '[:lower:]')}
RUN=$(labs_abs "${ROOT_DIR:-_output/run}")
SOCK=$RUN/fake-runtime.sock
export NODE RUN SOCK LABS_TOP LABS_CLUSTER

kubelet_ca() {
  cat "$LABS_CLUSTER/pki/ca.crt" "$RUN/pki/kubelet.crt" 2>/dev/null >"$LABS_CLUSTER/labs-kubelet-ca.pem"
  echo "$LABS_CLUSTER/labs-kubelet-ca.pem"
}

# kubelet_api PATH [curl flags]: GET https://127.0.0.1:<port>PATH with the admin's client
# certificate, trusting the node's serving certificate (kubelet_ca).
kubelet_api() {
  local path=$1
  shift
  curl -sS --cacert "$(kubelet_ca)" --cert "$LABS_CLUSTER/pki/admin.crt" --key "$LABS_CLUSTER/pki/admin.key" \
    "$@" "https://127.0.0.1:${KUBELET_PORT:-10250}$path"
}

# crictl ARGS: crictl (cri-tools v1.34.0, built once into ~/.cache by hack/tools/crictl.sh) on the
# node's CRI socket; -c /dev/null: no /etc/crictl.yaml needed.
crictl() {
  local dir
  dir=$("$LABS_TOP/hack/tools/crictl.sh") || return
  "$dir/crictl" -c /dev/null -r "${CRI_ENDPOINT:-unix://$SOCK}" "$@"
}

if command -v kubectl >/dev/null; then
  echo "labs: node $NODE, kubeconfig $KUBECONFIG, fake runtime $SOCK"
else
  echo "labs: no kubectl yet: run 'make run' once (it builds the control plane and kubectl)" >&2
fi

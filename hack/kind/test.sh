#!/usr/bin/env bash
# test.sh: run the steps of hack/kind-up.sh that need no Docker (hack/kind/lib.sh) offline, and
# check what they produce: the kind config (decoded by kind's own v1alpha4 types, through
# hack/tools/configcheck), the bootstrap token, its Secret and RBAC (built by kubectl's generators),
# and the two kubeconfigs written from a fake `kind get kubeconfig`.
#
# Usage: hack/kind/test.sh     (hack/verify-kind.sh runs it)
# Environment: KUBECTL (default: kubectl from PATH, else the local control plane's cached one; the
# kubectl parts are skipped, saying so, when there is none), CONFIGCHECK (a built configcheck).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=hack/kind/lib.sh
source hack/kind/lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kind-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1: $2"; }
skip() { skipped=$((skipped + 1)); echo "skip  $1: $2"; }

configcheck=${CONFIGCHECK:-}
if [[ -z $configcheck ]]; then
  configcheck=$tmp/configcheck
  (cd hack/tools && go build -o "$configcheck" ./configcheck)
fi
kubectl=${KUBECTL:-$(command -v kubectl || true)}
cached=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/k8s/v1.36.3/kubectl
if [[ -z $kubectl && -x $cached ]]; then kubectl=$cached; fi

# --- kind_config: kind decodes it; the grace period reaches kube-controller-manager's extraArgs.
name="kind config without a grace period"
kind_config "$KIND_NODE_IMAGE_PINNED" >"$tmp/plain.yaml"
if out=$("$configcheck" kind "$tmp/plain.yaml" 2>&1) && [[ $out == *"kube-controller-manager's default"* ]]; then
  pass "$name"
else fail "$name" "$out"; fi

name="kind config with --node-monitor-grace-period 5m"
kind_config "$KIND_NODE_IMAGE_PINNED" 5m >"$tmp/grace.yaml"
if out=$("$configcheck" kind "$tmp/grace.yaml" 2>&1) && [[ $out == *"node-monitor-grace-period 5m" ]]; then
  pass "$name"
else fail "$name" "$out"; fi

name="kind config pins the node image by digest"
if [[ $KIND_NODE_IMAGE_PINNED =~ ^kindest/node:v1\.36\.[0-9]+@sha256:[0-9a-f]{64}$ ]]; then
  pass "$name"
else fail "$name" "$KIND_NODE_IMAGE_PINNED"; fi

name="the checker rejects a misspelt kind field (it can fail)"
sed 's/^  image:/  imagez:/' "$tmp/plain.yaml" >"$tmp/typo.yaml"
if ! out=$("$configcheck" kind "$tmp/typo.yaml" 2>&1) && [[ $out == *"imagez"* ]]; then
  pass "$name"
else fail "$name" "accepted: $out"; fi

# --- The token: "[a-z0-9]{6}.[a-z0-9]{16}", different each time, with an RFC 3339 expiration.
name="bootstrap token format"
id=$(random_token_part 6)
secret=$(random_token_part 16)
if [[ "$id.$secret" =~ ^[a-z0-9]{6}\.[a-z0-9]{16}$ && $secret != "$(random_token_part 16)" ]]; then
  pass "$name"
else fail "$name" "$id.$secret"; fi

name="token expiration is RFC 3339 UTC, in the future"
expiration=$(token_expiration 24)
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [[ $expiration =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ && $expiration > $now ]]; then
  pass "$name"
else fail "$name" "$expiration (now $now)"; fi

# --- kubectl's generators and the kubeconfigs.
if [[ -z $kubectl ]]; then
  for name in "bootstrap token Secret" "bootstrap RBAC" "kubeconfigs from kind's" "kubeconfig without a CA"; do
    skip "$name" "no kubectl (set KUBECTL, or build it with hack/cluster/build.sh)"
  done
else
  # field FILE KEY: the base64-decoded value of KEY in a Secret's data.
  field() { awk -v k="  $2:" 'index($0, k) == 1 { print $2 }' "$1" | base64 --decode; }

  name="bootstrap token Secret"
  token_secret_manifest "$kubectl" "$id" "$secret" "$expiration" >"$tmp/secret.yaml"
  problems=""
  grep -q "^  name: bootstrap-token-$id$" "$tmp/secret.yaml" || problems+=" name"
  grep -q '^  namespace: kube-system$' "$tmp/secret.yaml" || problems+=" namespace"
  grep -q '^type: bootstrap.kubernetes.io/token$' "$tmp/secret.yaml" || problems+=" type"
  for kv in "token-id=$id" "token-secret=$secret" "expiration=$expiration" \
    usage-bootstrap-authentication=true usage-bootstrap-signing=true "auth-extra-groups=$BOOTSTRAP_GROUP"; do
    [[ $(field "$tmp/secret.yaml" "${kv%%=*}") == "${kv#*=}" ]] || problems+=" ${kv%%=*}"
  done
  if [[ -z $problems ]]; then pass "$name"; else fail "$name" "wrong:$problems"; fi

  name="bootstrap RBAC"
  node_bootstrap_rbac "$kubectl" >"$tmp/rbac.yaml"
  problems=""
  for want in "name: kubeadm:kubelet-bootstrap" "name: system:node-bootstrapper" \
    "name: kubeadm:node-autoapprove-bootstrap" "name: system:certificates.k8s.io:certificatesigningrequests:nodeclient" \
    "name: kubeadm:node-autoapprove-certificate-rotation" "name: system:certificates.k8s.io:certificatesigningrequests:selfnodeclient" \
    "name: $BOOTSTRAP_GROUP" "name: system:nodes"; do
    grep -qF -- "$want" "$tmp/rbac.yaml" || problems+=" [$want]"
  done
  [[ $(grep -c '^kind: ClusterRoleBinding$' "$tmp/rbac.yaml") == 3 ]] || problems+=" [3 bindings]"
  if [[ -z $problems ]]; then pass "$name"; else fail "$name" "missing:$problems"; fi

  # A kubeconfig as `kind get kubeconfig` writes it (kubectl config view does not parse the CA).
  ca_b64=$(printf '%s\n' "-----BEGIN CERTIFICATE-----" "MIIBfakefakefake" "-----END CERTIFICATE-----" | base64 | tr -d '\n')
  cat >"$tmp/kind.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: $ca_b64
    server: https://127.0.0.1:43210
  name: kind-minikubelet
contexts:
- context:
    cluster: kind-minikubelet
    user: kind-minikubelet
  name: kind-minikubelet
current-context: kind-minikubelet
preferences: {}
users:
- name: kind-minikubelet
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
EOF
  name="kubeconfigs from kind's"
  view() { "$kubectl" config view --kubeconfig "$1" --raw --minify -o "jsonpath=$2"; }
  problems=""
  if write_kubeconfigs "$kubectl" "$tmp/kind.kubeconfig" "$tmp/out" "$id.$secret"; then
    b=$tmp/out/bootstrap.kubeconfig
    [[ $(view "$b" '{.clusters[0].cluster.server}') == https://127.0.0.1:43210 ]] || problems+=" server"
    [[ $(view "$b" '{.clusters[0].cluster.certificate-authority-data}') == "$ca_b64" ]] || problems+=" CA"
    [[ $(view "$b" '{.users[0].user.token}') == "$id.$secret" ]] || problems+=" token"
    [[ -z $(view "$b" '{.users[0].user.client-certificate-data}') ]] || problems+=" bootstrap-has-a-cert"
    cmp -s "$tmp/kind.kubeconfig" "$tmp/out/admin.kubeconfig" || problems+=" admin-copy"
    for f in "$b" "$tmp/out/admin.kubeconfig"; do
      [[ -n $(find "$f" -perm 0600) ]] || problems+=" mode-of-${f##*/}"
    done
    # The CA comparison in hack/run.sh reads the line the same way in both files.
    [[ $(grep -m1 certificate-authority-data "$b" | awk '{print $2}') == "$ca_b64" ]] || problems+=" run.sh-ca-line"
  else
    problems+=" write_kubeconfigs-failed"
  fi
  if [[ -z $problems ]]; then pass "$name"; else fail "$name" "wrong:$problems"; fi

  name="kubeconfig without a CA is refused"
  grep -v certificate-authority-data "$tmp/kind.kubeconfig" >"$tmp/noca.kubeconfig"
  if ! out=$(write_kubeconfigs "$kubectl" "$tmp/noca.kubeconfig" "$tmp/out2" "$id.$secret" 2>&1) &&
    [[ $out == *"is it a kind kubeconfig"* && ! -e $tmp/out2/bootstrap.kubeconfig ]]; then
    pass "$name"
  else fail "$name" "accepted: $out"; fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))

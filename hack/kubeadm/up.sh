#!/usr/bin/env bash
# up.sh: `make kubeadm-up` / `make kubeadm-down` / `make kubeadm-shell`: a real cluster made by
# `kubeadm init` (v1.36.3) on minikubelet, in namespaces of its own, so nothing on the host changes.
#
#   up     1. outside (Go module proxy, Debian reachable): containerd and the CNI plugins
#             (hack/containerd/install.sh), the control plane (hack/cluster/build.sh), kubeadm,
#             kube-proxy and CoreDNS (build.sh), bin/minikubelet, the forwarder (forward/);
#          2. `unshare --net --mount --uts` runs this script again (--in-ns) in the background:
#             lo up with the node's address 10.213.0.1/32, hostname minikubelet-cp, ip_forward on;
#             an overlay over /etc, /var/lib, /var/log, /run, /usr/libexec and /usr/local
#             (upper dirs in _output/kubeadm/overlay), so every fixed path kubeadm, the kubelet
#             and the static pods write to (/etc/kubernetes, /var/lib/kubelet, /var/lib/etcd,
#             /etc/cni, /run/xtables.lock, /usr/libexec/kubernetes …) is private and goes away;
#             containerd (hack/containerd/up.sh, bridge CNI, pods in 10.244.0.0/24) with the
#             images kubeadm names built and imported; then `kubeadm init --config kubeadm.yaml`
#             and, once kubeadm has written the kubelet's files (its kubelet-start phase, where it
#             would start the kubelet through systemd, and warns that there is none), minikubelet
#             with the flags of kubeadm's systemd drop-in 10-kubeadm.conf — nothing edited;
#          3. outside: a forwarder on 127.0.0.1:$KUBEADM_API_PORT (default 16443) to the API
#             server (through a unix socket in _output/kubeadm: the host never enters the
#             namespace), _output/kubeadm/admin.kubeconfig pointing at it. Returns when
#             `kubeadm init` has ended (its status); the cluster keeps running.
#   down   stop the in-namespace run by its PID (it stops minikubelet, containerd and every
#          process in the namespace; the namespaces and their mounts end with it), then the
#          forwarder, and remove _output/kubeadm's state. Ctrl-C during `up` does the same.
#   shell  a shell inside the namespaces (nsenter), with KUBECONFIG=/etc/kubernetes/admin.conf
#          and kubeadm, kubectl, crictl… on PATH.
#
# Environment: KUBEADM_API_PORT (16443), OUT (_output/kubeadm), MINIKUBELET (bin/minikubelet).
# Preflight checks ignored, and why: see IGNORE_PREFLIGHT below and docs/kubeadm.md.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
OUT=${OUT:-_output/kubeadm}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export OUT
PORT=${KUBEADM_API_PORT:-16443}
NODE_IP=10.213.0.1
NODE_NAME=minikubelet-cp
POD_SUBNET=10.244.0.0/16
NODE_POD_CIDR=10.244.0.0/24 # the first node's: kube-controller-manager gives it the first /24
PKI=/etc/kubernetes/pki
bin=$OUT/bin
logs=$OUT/logs
# The directories overlaid in the mount namespace: each holds a fixed path kubeadm, the kubelet
# or a static pod's hostPath (DirectoryOrCreate/FileOrCreate) writes to.
OVERLAYS=(/etc /var/lib /var/log /run /usr/libexec /usr/local)
# Preflight checks that fail here for reasons that are not the kubelet's, each with its reason
# (kubeadm prints the check's name; --ignore-preflight-errors takes it):
#   SystemVerification   this kernel mounts cgroup v1, which kubeadm v1.36's system verification
#                        refuses; minikubelet runs on cgroupfs v1 here. (It also runs `kubelet
#                        --version`, see the next.)
#   KubeletVersion       kubeadm runs `kubelet --version` and wants "Kubernetes v1.35–1.36";
#                        there is no `kubelet`: minikubelet has its own version (it implements
#                        v1.36.3's node API, and reports that as the Node's kubeletVersion).
IGNORE_PREFLIGHT=${IGNORE_PREFLIGHT:-SystemVerification,KubeletVersion}

# own PROGRAM ARGS… &: a long-lived process of this run, in a session of its own, dying with this
# script (PR_SET_PDEATHSIG). exec: $! is the program's PID.
own() { exec setsid setpriv --pdeathsig TERM -- "$@"; }

# stop PID NAME SECONDS: SIGTERM, wait, then SIGKILL — that process only, by its PID.
# shellcheck disable=SC2317 # reached through the EXIT trap
stop() {
  local pid=$1 name=$2 i
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for (( i = 0; i < $3 * 10; i++ )); do
    kill -0 "$pid" 2>/dev/null || { echo "stopped $name (PID $pid)"; return 0; }
    sleep 0.1
  done
  echo "kubeadm-up: $name (PID $pid) did not stop in $3 s; SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
# Inside the namespaces.
# ---------------------------------------------------------------------------------------------
kubelet_pid="" kubeadm_pid="" fwd_pid="" sleep_pid=""

# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
  trap - EXIT INT TERM
  echo "== clean up"
  stop "$kubeadm_pid" kubeadm 10
  stop "$kubelet_pid" minikubelet 15
  hack/containerd/up.sh down --state-dir "$OUT/containerd" || true
  stop "$fwd_pid" forwarder 5
  stop "$sleep_pid" "sleep (the run's wait)" 1 >/dev/null
  # Anything else in this namespace was started by this run: name it and stop it.
  local ns d pid
  ns=$(readlink /proc/self/ns/net)
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid != "$$" && $pid != "$BASHPID" && $(readlink "$d/ns/net" 2>/dev/null) == "$ns" ]] || continue
    echo "kubeadm-up: still running in the namespace: $pid $(tr '\0' ' ' <"$d/cmdline" | cut -c1-120)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  done
  rm -f "$OUT/inner.pid"
  echo "== down"
}

# private_mounts: an overlay over each of OVERLAYS, its changes under $OUT/overlay. Refuses a
# directory with mounts below it (an overlay would hide them) or one that holds $OUT.
private_mounts() {
  local d name
  for d in "${OVERLAYS[@]}"; do
    [[ $OUT/ != "$d"/* ]] || { echo "kubeadm-up: OUT=$OUT is under $d, which is overlaid; use another OUT" >&2; exit 1; }
    if findmnt -rno TARGET | grep -q "^$d/"; then
      echo "kubeadm-up: $d has mounts below it ($(findmnt -rno TARGET | grep "^$d/" | head -3 | tr '\n' ' ')); an overlay would hide them" >&2
      exit 1
    fi
    name=${d//\//_}
    mkdir -p "$OUT/overlay/$name/upper" "$OUT/overlay/$name/work"
    mount -t overlay "kubeadm$name" -o "lowerdir=$d,upperdir=$OUT/overlay/$name/upper,workdir=$OUT/overlay/$name/work" "$d"
  done
}

write_kubeadm_config() {
  cat >"$OUT/kubeadm.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: $NODE_IP
  bindPort: 6443
nodeRegistration:
  name: $NODE_NAME
  criSocket: unix://$OUT/containerd/containerd.sock
  # Never: the images are built here and imported; nothing is pulled.
  imagePullPolicy: Never
  kubeletExtraArgs:
  - name: node-ip
    value: $NODE_IP
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.36.3
clusterName: minikubelet
networking:
  podSubnet: $POD_SUBNET
  serviceSubnet: 10.96.0.0/12
apiServer:
  # The host's kubectl reaches it through 127.0.0.1:$PORT (the forwarder).
  certSANs: [127.0.0.1]
# Serving certificates signed by the cluster CA (serving_certs), so that minikubelet's HTTPS
# probes, which verify, can verify them (see trust_cluster_ca).
controllerManager:
  extraArgs:
  - name: tls-cert-file
    value: $PKI/kube-controller-manager/serving.crt
  - name: tls-private-key-file
    value: $PKI/kube-controller-manager/serving.key
scheduler:
  extraArgs:
  - name: tls-cert-file
    value: $PKI/kube-scheduler/serving.crt
  - name: tls-private-key-file
    value: $PKI/kube-scheduler/serving.key
  # kube-scheduler's pod mounts only scheduler.conf; kube-controller-manager's mounts $PKI.
  extraVolumes:
  - name: serving-cert
    hostPath: $PKI/kube-scheduler
    mountPath: $PKI/kube-scheduler
    readOnly: true
    pathType: Directory
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# minikubelet has no systemd cgroup driver (and there is no systemd here).
cgroupDriver: cgroupfs
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
conntrack:
  # 0: leave nf_conntrack_max alone. It is a sysctl of the host's network namespace only
  # (read-only in any other: "open /proc/sys/net/netfilter/nf_conntrack_max: permission
  # denied"), and this node is a network namespace; kind sets the same for the same reason.
  maxPerCore: 0
EOF
}

# serving_certs: a serving certificate for kube-controller-manager and kube-scheduler, signed by
# the cluster CA, for the host their probes use (127.0.0.1; kubeadm's manifests say so). Without
# one each makes itself a self-signed certificate, which a verifying prober refuses.
serving_certs() {
  local c d ext
  for c in kube-controller-manager kube-scheduler; do
    d=$PKI/$c
    mkdir -p "$d"
    ext=$(mktemp)
    printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'keyUsage=critical,digitalSignature,keyEncipherment' \
      'extendedKeyUsage=serverAuth' 'basicConstraints=critical,CA:FALSE' >"$ext"
    (umask 077; openssl req -new -newkey rsa:2048 -nodes -subj "/CN=$c" -keyout "$d/serving.key" -out "$d/serving.csr" 2>/dev/null)
    openssl x509 -req -in "$d/serving.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
      -days 365 -extfile "$ext" -out "$d/serving.crt" 2>/dev/null
    rm -f "$d/serving.csr" "$ext"
  done
}

# trust_cluster_ca: the cluster CA into the node's trust store (Go's system pool reads
# /etc/ssl/certs/ca-certificates.crt; /etc is the namespace's overlay, so the host's stays as it
# was). minikubelet's HTTPS prober verifies against that pool; upstream's does not verify at all.
trust_cluster_ca() {
  local bundle=/etc/ssl/certs/ca-certificates.crt
  [[ -f $bundle ]] || { echo "kubeadm-up: no $bundle (Debian's ca-certificates) to add the cluster CA to" >&2; exit 1; }
  cat "$PKI/ca.crt" >>"$bundle"
}

# start_kubelet: what systemd does with kubeadm's kubelet.service and 10-kubeadm.conf, once
# kubeadm has written the files it names:
#   ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
#   KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf
#   KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml
#   EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env   (KUBELET_KUBEADM_ARGS)
#   EnvironmentFile=-/etc/default/kubelet                 (KUBELET_EXTRA_ARGS; none here)
start_kubelet() {
  local i KUBELET_KUBEADM_ARGS=""
  for (( i = 0; i < 3000; i++ )); do
    [[ -f /var/lib/kubelet/config.yaml && -f /var/lib/kubelet/kubeadm-flags.env ]] && break
    kill -0 "$kubeadm_pid" 2>/dev/null || return 0
    sleep 0.1
  done
  # shellcheck disable=SC1091 # written by kubeadm at run time
  source /var/lib/kubelet/kubeadm-flags.env
  echo "== minikubelet, with kubeadm-flags.env: $KUBELET_KUBEADM_ARGS"
  # shellcheck disable=SC2086 # KUBELET_KUBEADM_ARGS holds several flags, split as systemd does
  own "$bin/minikubelet" --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
    --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml \
    --root-dir=/var/lib/kubelet $KUBELET_KUBEADM_ARGS -v 2 >"$logs/minikubelet.log" 2>&1 &
  kubelet_pid=$!
}

inner() {
  export GOPROXY=off PATH="$bin:$PATH"
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  echo $$ >"$OUT/inner.pid"
  echo "== network namespace, mounts"
  if [[ $(ip -o link show | awk -F': ' '$2 != "lo"' | wc -l) != 0 ]]; then
    echo "kubeadm-up: not a fresh network namespace; refusing to change it" >&2; exit 1
  fi
  ip link set lo up
  ip addr add "$NODE_IP/32" dev lo
  sysctl -qw net.ipv4.ip_forward=1 # per network namespace; kubeadm's preflight wants 1
  private_mounts
  hostname "$NODE_NAME" # the UTS namespace's own
  # Only now that /etc is overlaid: the node's name resolves to its address (kubeadm's Hostname check).
  printf '%s\t%s\n' "$NODE_IP" "$NODE_NAME" >>/etc/hosts

  echo "== containerd + images"
  hack/containerd/up.sh up --state-dir "$OUT/containerd" --network bridge --pod-subnet "$NODE_POD_CIDR" \
    --exit-with $$ --kubeadm-images "$OUT/images.txt" --kubeadm-bin-dir "$bin/images"

  own "$bin/forward" --listen "unix:$OUT/apiserver.sock" --to "tcp:$NODE_IP:6443" --exit-with $$ \
    >"$logs/forward-in.log" 2>&1 &
  fwd_pid=$!

  echo "== cluster CA (kubeadm init phase certs ca), serving certificates, trust"
  write_kubeadm_config
  "$bin/kubeadm" init phase certs ca --config "$OUT/kubeadm.yaml" >"$logs/kubeadm-ca.log" 2>&1
  serving_certs
  trust_cluster_ca

  echo "== kubeadm init"
  own "$bin/kubeadm" init --config "$OUT/kubeadm.yaml" --ignore-preflight-errors "$IGNORE_PREFLIGHT" \
    -v 1 >"$logs/kubeadm-init.log" 2>&1 &
  kubeadm_pid=$!
  start_kubelet
  local status=0
  wait "$kubeadm_pid" || status=$?
  kubeadm_pid=""
  echo "kubeadm init exited with status $status"
  if (( status == 0 )); then
    kubeadm token create --print-join-command --kubeconfig /etc/kubernetes/admin.conf >"$OUT/join-command.txt" \
      2>"$logs/kubeadm-token.log" || true
  fi
  echo "$status" >"$OUT/init-status"
  # The cluster, or as far as kubeadm got, stays until kubeadm-down.
  sleep infinity &
  sleep_pid=$!
  wait "$sleep_pid" || true
}

if [[ ${1:-} == --in-ns ]]; then
  inner
  exit
fi

# ---------------------------------------------------------------------------------------------
# Outside: build, start the namespaced run, forward, down, shell.
# ---------------------------------------------------------------------------------------------
inner_pid() { [[ -f $OUT/inner.pid ]] && kill -0 "$(<"$OUT/inner.pid")" 2>/dev/null && cat "$OUT/inner.pid"; }

down() {
  local pid
  pid=$(inner_pid) || true
  stop "$pid" "the kubeadm run (its namespaces)" 120
  [[ ! -f $OUT/forward.pid ]] || stop "$(<"$OUT/forward.pid")" "the host's forwarder" 5
  rm -f "$OUT/forward.pid" "$OUT/inner.pid" "$OUT/apiserver.sock"
  if awk -v d="$OUT/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "kubeadm-down: mounts are left under $OUT; not removing its state" >&2
    exit 1
  fi
  rm -rf "$OUT/overlay" "$OUT/containerd" "$OUT/admin.kubeconfig" "$OUT/init-status"
  echo "kubeadm: down"
}

build() {
  echo "== build"
  hack/containerd/install.sh
  local k8s kadm
  k8s=$(hack/cluster/build.sh)
  kadm=$("$here/build.sh")
  [[ -x ${MINIKUBELET:-bin/minikubelet} ]] || make build >/dev/null
  mkdir -p "$bin/images"
  cp "${MINIKUBELET:-bin/minikubelet}" "$bin/minikubelet"
  ln -sf "$kadm/kubeadm" "$k8s/kubectl" "$bin/"
  ln -sf "$k8s/kube-apiserver" "$k8s/kube-controller-manager" "$k8s/kube-scheduler" "$k8s/etcd" \
    "$kadm/kube-proxy" "$kadm/coredns" "$bin/images/"
  (cd "$here" && go build -o "$bin/forward" ./forward)
  "$bin/kubeadm" config images list --kubernetes-version v1.36.3 >"$OUT/images.txt"
}

# admin_kubeconfig: kubeadm's admin.conf with its server replaced by the host's forwarder.
admin_kubeconfig() {
  local src=$OUT/overlay/_etc/upper/kubernetes/admin.conf
  [[ -f $src ]] || return 0
  sed "s#server: https://$NODE_IP:6443#server: https://127.0.0.1:$PORT#" "$src" >"$OUT/admin.kubeconfig.tmp"
  chmod 600 "$OUT/admin.kubeconfig.tmp"
  mv "$OUT/admin.kubeconfig.tmp" "$OUT/admin.kubeconfig"
}

up() {
  if inner_pid >/dev/null; then echo "kubeadm: already running (PID $(<"$OUT/inner.pid")); make kubeadm-down first" >&2; exit 1; fi
  down >/dev/null
  rm -rf "$logs" "$OUT/join-command.txt"
  mkdir -p "$logs"
  local start=$SECONDS
  build
  echo "build: $((SECONDS - start)) s"
  trap 'echo; echo "kubeadm-up: interrupted; stopping"; down; exit 130' INT TERM
  setsid unshare --net --mount --uts --propagation private -- "$0" --in-ns >"$logs/up.log" 2>&1 </dev/null &
  local pid=$! i
  setsid "$bin/forward" --listen "tcp:127.0.0.1:$PORT" --to "unix:$OUT/apiserver.sock" --exit-with "$pid" \
    >"$logs/forward-host.log" 2>&1 </dev/null &
  echo $! >"$OUT/forward.pid"
  tail -n +1 -f --pid="$pid" "$logs/up.log" &
  local tail_pid=$!
  for (( i = 0; i < 6000; i++ )); do
    [[ -f $OUT/init-status ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$tail_pid" 2>/dev/null || true
  if [[ ! -f $OUT/init-status ]]; then
    echo "kubeadm-up: the run ended or timed out before kubeadm init did; see $logs" >&2; down; exit 1
  fi
  admin_kubeconfig
  echo "kubeadm init: $(tail -n 25 "$logs/kubeadm-init.log")" | tail -n 25
  echo "up: $((SECONDS - start)) s; status of kubeadm init: $(<"$OUT/init-status")"
  echo "kubectl --kubeconfig $OUT/admin.kubeconfig get nodes; make kubeadm-shell; make kubeadm-down"
  [[ $(<"$OUT/init-status") == 0 ]]
}

shell() {
  local pid
  pid=$(inner_pid) || { echo "kubeadm: not running (make kubeadm-up)" >&2; exit 1; }
  exec nsenter -t "$pid" -n -m -u -- env KUBECONFIG=/etc/kubernetes/admin.conf PATH="$bin:$PATH" \
    PS1='[kubeadm \W]# ' bash --norc -i
}

if [[ $(id -u) != 0 ]]; then
  echo "kubeadm: needs root (namespaces, mounts, containerd)" >&2; exit 1
fi
for tool in unshare setpriv nsenter ip; do
  command -v $tool >/dev/null || { echo "kubeadm: $tool is missing (util-linux, iproute2)" >&2; exit 1; }
done
case ${1:-up} in
  up) up ;;
  down) down ;;
  shell) shell ;;
  *) echo "usage: up.sh [up|down|shell]" >&2; exit 2 ;;
esac

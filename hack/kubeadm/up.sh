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
#          With KUBEADM_NODES=2, then a second node (join_node): the same in namespaces of its
#          own (NODE_INDEX=2, state under _output/kubeadm/node2), a veth pair and routes between
#          the two network namespaces, `kubeadm join` and minikubelet's TLS bootstrap.
#   down   stop the in-namespace runs by their PIDs (it stops minikubelet, containerd and every
#          process in the namespace; the namespaces and their mounts end with it), then the
#          forwarder, and remove _output/kubeadm's state. Ctrl-C during `up` does the same.
#   shell  a shell inside the namespaces (nsenter), with KUBECONFIG=/etc/kubernetes/admin.conf
#          and kubeadm, kubectl, crictl… on PATH.
#   restart-kubelet [NODE]  stop minikubelet on node NODE (1, the control plane, by default; 2 the
#          node that joined) by SIGTERM to its PID and start it again with the same files and
#          flags, as `systemctl restart kubelet`; the pods keep running in containerd.
#
# Environment: KUBEADM_API_PORT (16443), OUT (_output/kubeadm), MINIKUBELET (bin/minikubelet),
# KUBEADM_NODES (1).
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
# KUBEADM_NODES=2: a second node joins (kubeadm join), in namespaces of its own. NODE_INDEX is
# set for the in-namespace run: 1 the control plane, 2 the node that joins.
NODES=${KUBEADM_NODES:-1}
NODE_INDEX=${NODE_INDEX:-1}
CP_IP=10.213.0.1
NODE_IP=10.213.0.$NODE_INDEX
NODE_NAME=minikubelet-cp
[[ $NODE_INDEX == 1 ]] || NODE_NAME=minikubelet-w$((NODE_INDEX - 1))
POD_SUBNET=10.244.0.0/16
SERVICE_SUBNET=10.96.0.0/12
# Each node's share of it: kube-controller-manager gives the nodes /24s in the order they register.
NODE_POD_CIDR=10.244.$((NODE_INDEX - 1)).0/24
PKI=/etc/kubernetes/pki
bin=$OUT/bin
logs=$OUT/logs
# Each node's own state (overlays, containerd, PID): $OUT for the first, $OUT/node2 for the second.
NODE_DIR=$OUT
[[ $NODE_INDEX == 1 ]] || NODE_DIR=$OUT/node$NODE_INDEX
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

# redact: a bootstrap token (<id>.<secret>, and any value of --token) out of text to be shown;
# kubeadm prints it in its join command and "[bootstrap-token] Using token". Tokens never reach a log.
redact() { sed -E 's/(--token[ =])[^ ]+/\1<redacted>/g; s/\b[a-z0-9]{6}\.[a-z0-9]{16}\b/<redacted>/g'; }

# private_file FILE: FILE made empty, 0600 (the logs that hold the token, the join command).
private_file() { (umask 077; : >"$1"); chmod 600 "$1"; }

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
  hack/containerd/up.sh down --state-dir "$NODE_DIR/containerd" || true
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
  rm -f "$NODE_DIR/inner.pid"
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
    mkdir -p "$NODE_DIR/overlay/$name/upper" "$NODE_DIR/overlay/$name/work"
    mount -t overlay "kubeadm$name" -o "lowerdir=$d,upperdir=$NODE_DIR/overlay/$name/upper,workdir=$NODE_DIR/overlay/$name/work" "$d"
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
  serviceSubnet: $SERVICE_SUBNET
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
    --root-dir=/var/lib/kubelet $KUBELET_KUBEADM_ARGS -v 2 >>"${logs_kubelet:-$logs/minikubelet.log}" 2>&1 &
  kubelet_pid=$!
  echo "$kubelet_pid" >"$NODE_DIR/kubelet.pid"
}

# restart_kubelet: what `systemctl restart kubelet` does: SIGTERM to minikubelet (by its PID),
# wait for it to end, then start it again with the same files and flags (start_kubelet). The
# static pods' containers keep running in containerd meanwhile; the new minikubelet adopts them.
# Writes the times (ms since the epoch) of the SIGTERM and of the new one's first good /healthz
# to $NODE_DIR/kubelet-restarted: the kubelet's downtime.
restart_kubelet() {
  local t0 i
  t0=$(date +%s%3N)
  echo "== restart minikubelet (PID $kubelet_pid)"
  stop "$kubelet_pid" minikubelet 30
  echo "--- restarted at $(date -u +%FT%TZ) ---" >>"${logs_kubelet:-$logs/minikubelet.log}"
  start_kubelet
  for (( i = 0; i < 600; i++ )); do
    curl -fsS -m 1 http://127.0.0.1:10248/healthz >/dev/null 2>&1 && break
    sleep 0.05
  done
  echo "$t0 $(date +%s%3N)" >"$NODE_DIR/kubelet-restarted"
}

# wait_forever: until kubeadm-down, restarting minikubelet on SIGUSR1 (up.sh restart-kubelet).
wait_forever() {
  local restart=0
  trap 'restart=1' USR1
  sleep infinity &
  sleep_pid=$!
  while kill -0 "$sleep_pid" 2>/dev/null; do
    wait "$sleep_pid" || true
    if (( restart )); then restart=0; restart_kubelet; fi
  done
}

# node_setup: this node's network namespace (lo with its address, ip_forward), mounts, hostname,
# containerd and the images.
node_setup() {
  export GOPROXY=off PATH="$bin:$PATH"
  mkdir -p "$NODE_DIR"
  echo "== network namespace, mounts"
  if [[ $(ip -o link show | awk -F': ' '$2 != "lo"' | wc -l) != 0 ]]; then
    echo "kubeadm-up: not a fresh network namespace; refusing to change it" >&2; exit 1
  fi
  echo $$ >"$NODE_DIR/inner.pid" # after the check: the second node's veth is made once it is there
  ip link set lo up
  ip addr add "$NODE_IP/32" dev lo
  # A route for the Service subnet, with the node's address as source: the namespace has no
  # default route, and a connection the node itself opens to a ClusterIP (kube-apiserver to a
  # webhook or an aggregated API, a hostNetwork pod, e2e.test) needs a route before kube-proxy's
  # OUTPUT DNAT rewrites its destination and the kernel routes it again to the backend pod. A real
  # node's default route does this. Unknown ClusterIPs go nowhere (lo).
  ip route add "$SERVICE_SUBNET" dev lo src "$NODE_IP"
  sysctl -qw net.ipv4.ip_forward=1 # per network namespace; kubeadm's preflight wants 1
  private_mounts
  hostname "$NODE_NAME" # the UTS namespace's own
  # Only now that /etc is overlaid: the node's name resolves to its address (kubeadm's Hostname check).
  printf '%s\t%s\n' "$NODE_IP" "$NODE_NAME" >>/etc/hosts

  echo "== containerd + images"
  hack/containerd/up.sh up --state-dir "$NODE_DIR/containerd" --network bridge --pod-subnet "$NODE_POD_CIDR" \
    --exit-with $$ --kubeadm-images "$OUT/images.txt" --kubeadm-bin-dir "$bin/images"
}

inner() {
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  node_setup

  own "$bin/forward" --listen "unix:$OUT/apiserver.sock" --to "tcp:$CP_IP:6443" --exit-with $$ \
    >"$logs/forward-in.log" 2>&1 &
  fwd_pid=$!

  echo "== cluster CA (kubeadm init phase certs ca), serving certificates, trust"
  write_kubeadm_config
  "$bin/kubeadm" init phase certs ca --config "$OUT/kubeadm.yaml" >"$logs/kubeadm-ca.log" 2>&1
  serving_certs
  trust_cluster_ca

  echo "== kubeadm init"
  private_file "$logs/kubeadm-init.log"
  own "$bin/kubeadm" init --config "$OUT/kubeadm.yaml" --ignore-preflight-errors "$IGNORE_PREFLIGHT" \
    -v 1 >>"$logs/kubeadm-init.log" 2>&1 &
  kubeadm_pid=$!
  start_kubelet
  local status=0
  wait "$kubeadm_pid" || status=$?
  kubeadm_pid=""
  echo "kubeadm init exited with status $status"
  if (( status == 0 )); then
    (umask 077; kubeadm token create --print-join-command --kubeconfig /etc/kubernetes/admin.conf \
      >"$OUT/join-command.txt" 2>"$logs/kubeadm-token.log") || true
  fi
  echo "$status" >"$OUT/init-status"
  # The cluster, or as far as kubeadm got, stays until kubeadm-down.
  wait_forever
}

# write_join_config: a JoinConfiguration from the join command the control plane printed (its
# token and CA hash), with this node's name, CRI socket and node IP.
write_join_config() {
  local token hash
  token=$(grep -o -- '--token [^ ]*' "$OUT/join-command.txt" | cut -d' ' -f2)
  hash=$(grep -o -- '--discovery-token-ca-cert-hash [^ ]*' "$OUT/join-command.txt" | cut -d' ' -f2)
  [[ -n $token && -n $hash ]] || { echo "kubeadm-up: no join command in $OUT/join-command.txt" >&2; exit 1; }
  # It holds the token: 0600.
  (umask 077; cat >"$NODE_DIR/kubeadm-join.yaml") <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: $CP_IP:6443
    token: $token
    caCertHashes: [$hash]
nodeRegistration:
  name: $NODE_NAME
  criSocket: unix://$NODE_DIR/containerd/containerd.sock
  imagePullPolicy: Never
  kubeletExtraArgs:
  - name: node-ip
    value: $NODE_IP
EOF
}

# join_inner: the second node. The outside links it to the first (a veth pair, routes) once
# this run has written its PID; containerd comes up, then `kubeadm join` and minikubelet from the
# files join writes (bootstrap-kubelet.conf: minikubelet's TLS bootstrap).
join_inner() {
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  node_setup
  printf '%s\t%s\n' "$CP_IP" minikubelet-cp >>/etc/hosts
  local i
  for (( i = 0; i < 300; i++ )); do [[ -f $NODE_DIR/linked ]] && break; sleep 0.1; done
  [[ -f $NODE_DIR/linked ]] || { echo "kubeadm-up: the nodes were not linked" >&2; exit 1; }
  echo "== kubeadm join"
  write_join_config
  private_file "$logs/kubeadm-join.log"
  own "$bin/kubeadm" join --config "$NODE_DIR/kubeadm-join.yaml" --ignore-preflight-errors "$IGNORE_PREFLIGHT" \
    -v 1 >>"$logs/kubeadm-join.log" 2>&1 &
  kubeadm_pid=$!
  logs_kubelet=$logs/minikubelet-node$NODE_INDEX.log start_kubelet
  local status=0
  wait "$kubeadm_pid" || status=$?
  kubeadm_pid=""
  echo "kubeadm join exited with status $status"
  echo "$status" >"$NODE_DIR/join-status"
  wait_forever
}

if [[ ${1:-} == --in-ns ]]; then
  if [[ $NODE_INDEX == 1 ]]; then inner; else join_inner; fi
  exit
fi

# ---------------------------------------------------------------------------------------------
# Outside: build, start the namespaced run, forward, down, shell.
# ---------------------------------------------------------------------------------------------
inner_pid() { [[ -f $OUT/inner.pid ]] && kill -0 "$(<"$OUT/inner.pid")" 2>/dev/null && cat "$OUT/inner.pid"; }

# node2_pid: the second node's in-namespace run, if it runs.
node2_pid() { [[ -f $OUT/node2/inner.pid ]] && kill -0 "$(<"$OUT/node2/inner.pid")" 2>/dev/null && cat "$OUT/node2/inner.pid"; }

# record_cgroups: which kubepods cgroups (/sys/fs/cgroup/<controller>/kubepods{,/burstable,/besteffort})
# exist before the run, to $OUT/cgroups-before: down removes only those the run made.
record_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/kubepods{,/burstable,/besteffort}; do
    [[ -d $d ]] && echo "$d"
  done >"$OUT/cgroups-before" || true
}

# remove_cgroup DIR: rmdir DIR and the cgroups below it, deepest first. The containers of a
# namespace that has just been stopped are killed by the kernel and leave their cgroups a moment
# later (EBUSY until then, longer on a loaded machine), so try again until $cgroup_deadline
# (SECONDS; one deadline for all, so that a cgroup that stays busy does not hold down for long).
remove_cgroup() {
  local d=$1
  while :; do
    find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
    rmdir "$d" 2>/dev/null && return 0
    [[ -d $d ]] || return 0
    ((SECONDS < cgroup_deadline)) || break
    sleep 0.5
  done
  echo "kubeadm-down: cannot remove $d (busy)" >&2
}

# remove_pod_cgroups: after the runs have ended (containerd stopped), the pod cgroups of this run's
# pods — their UIDs from the nodes' own /var/lib/kubelet/pods (overlay upper dirs) — on the host's
# cgroupfs (v1, no cgroup namespace), deepest first, by rmdir only; then kubepods{/burstable,
# /besteffort} if empty and made by this run. Other runs' pods (test/e2e/containerd, conformance)
# share /kubepods: nothing else is touched.
remove_pod_cgroups() {
  local p uid c q d cgroup_deadline=$((SECONDS + 15))
  for p in "$OUT"/overlay/_var_lib/upper/kubelet/pods/* "$OUT"/node2/overlay/_var_lib/upper/kubelet/pods/*; do
    uid=${p##*/}
    [[ $uid =~ ^[0-9a-f-]+$ ]] || continue # a UID, or a static pod's (a hash); not a glob left as is
    for c in /sys/fs/cgroup/*/kubepods; do
      for q in "" /burstable /besteffort; do
        d=$c$q/pod$uid
        [[ -d $d ]] || continue
        remove_cgroup "$d"
      done
    done
  done
  [[ -f $OUT/cgroups-before ]] || return 0
  for d in /sys/fs/cgroup/*/kubepods/{burstable,besteffort} /sys/fs/cgroup/*/kubepods; do
    if [[ -d $d ]] && ! grep -qxF "$d" "$OUT/cgroups-before"; then
      rmdir "$d" 2>/dev/null || true # not empty: another run's pods are in it
    fi
  done
}

down() {
  local pid
  pid=$(node2_pid) || true
  stop "$pid" "node 2's run (its namespaces)" 120
  pid=$(inner_pid) || true
  stop "$pid" "the kubeadm run (its namespaces)" 120
  [[ ! -f $OUT/forward.pid ]] || stop "$(<"$OUT/forward.pid")" "the host's forwarder" 5
  rm -f "$OUT/forward.pid" "$OUT/inner.pid" "$OUT/apiserver.sock"
  if awk -v d="$OUT/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "kubeadm-down: mounts are left under $OUT; not removing its state" >&2
    exit 1
  fi
  remove_pod_cgroups
  rm -rf "$OUT/overlay" "$OUT/containerd" "$OUT/admin.kubeconfig" "$OUT/init-status" "$OUT/node2" \
    "$OUT/join-command.txt" "$OUT/cgroups-before"
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
  (umask 077; mkdir -p "$logs") # the kubeadm logs hold the bootstrap token
  record_cgroups
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
  echo "kubeadm init: $(tail -n 25 "$logs/kubeadm-init.log" | redact)" | tail -n 25
  echo "up: $((SECONDS - start)) s; status of kubeadm init: $(<"$OUT/init-status")"
  [[ $(<"$OUT/init-status") == 0 ]] || exit 1
  if (( NODES > 1 )); then
    echo "== node 2"
    join_node || { echo "kubeadm-up: kubeadm join failed; see $logs" >&2; exit 1; }
    echo "up (2 nodes): $((SECONDS - start)) s"
  fi
  echo "kubectl --kubeconfig $OUT/admin.kubeconfig get nodes; make kubeadm-shell; make kubeadm-down"
}

# link_nodes PID1 PID2: a veth pair between the two nodes' network namespaces (made in the first,
# its peer moved into the second by PID: nothing on the host's), a route to the other node's
# address and one to its pods' /24, each way.
link_nodes() {
  nsenter -t "$1" -n ip link add veth-n1 type veth peer name veth-n2 netns "$2"
  nsenter -t "$1" -n sh -c 'ip link set veth-n1 up && ip route add 10.213.0.2/32 dev veth-n1 &&
    ip route add 10.244.1.0/24 via 10.213.0.2 dev veth-n1 onlink'
  nsenter -t "$2" -n sh -c 'ip link set veth-n2 up && ip route add 10.213.0.1/32 dev veth-n2 &&
    ip route add 10.244.0.0/24 via 10.213.0.1 dev veth-n2 onlink'
}

# join_node: the second node, in namespaces of its own, joins with the printed join command.
join_node() {
  local pid i
  mkdir -p "$OUT/node2"
  NODE_INDEX=2 setsid unshare --net --mount --uts --propagation private -- "$0" --in-ns \
    >"$logs/up-node2.log" 2>&1 </dev/null &
  pid=$!
  for (( i = 0; i < 600; i++ )); do
    [[ -f $OUT/node2/inner.pid ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -f $OUT/node2/inner.pid ]] || { echo "kubeadm-up: node 2's run ended early; see $logs/up-node2.log" >&2; return 1; }
  link_nodes "$(inner_pid)" "$(<"$OUT/node2/inner.pid")"
  touch "$OUT/node2/linked"
  tail -n +1 -f --pid="$pid" "$logs/up-node2.log" &
  local tail_pid=$!
  for (( i = 0; i < 6000; i++ )); do
    [[ -f $OUT/node2/join-status ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$tail_pid" 2>/dev/null || true
  echo "kubeadm join: $(tail -n 8 "$logs/kubeadm-join.log" | redact)"
  [[ -f $OUT/node2/join-status && $(<"$OUT/node2/join-status") == 0 ]]
}

# restart_kubelet_outside NODE: asks node NODE's run (1 the control plane, 2 the node that joined)
# to restart its minikubelet (SIGUSR1; restart_kubelet does it inside) and waits for it; prints
# the kubelet's downtime.
restart_kubelet_outside() {
  local node=${1:-1} dir=$OUT pid i t
  [[ $node == 1 ]] || dir=$OUT/node$node
  if [[ $node == 1 ]]; then pid=$(inner_pid) || true; else pid=$(node2_pid) || true; fi
  [[ -n $pid ]] || { echo "kubeadm: node $node is not running (make kubeadm-up)" >&2; exit 1; }
  rm -f "$dir/kubelet-restarted"
  echo "restarting minikubelet on node $node (PID $(<"$dir/kubelet.pid"))"
  kill -USR1 "$pid"
  for (( i = 0; i < 1200; i++ )); do [[ -s $dir/kubelet-restarted ]] && break; sleep 0.05; done
  [[ -s $dir/kubelet-restarted ]] || { echo "kubeadm: minikubelet on node $node did not come back in 60 s" >&2; exit 1; }
  read -r -a t <"$dir/kubelet-restarted"
  echo "minikubelet restarted (PID $(<"$dir/kubelet.pid")); down for $(( t[1] - t[0] )) ms (SIGTERM → /healthz ok)"
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
  restart-kubelet) restart_kubelet_outside "${2:-1}" ;;
  *) echo "usage: up.sh [up|down|shell|restart-kubelet [1|2]]" >&2; exit 2 ;;
esac

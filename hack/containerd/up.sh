#!/usr/bin/env bash
# up.sh: run a private containerd for minikubelet — its own config, root, state, socket and CNI
# config, all under one state directory — so it never touches a containerd the machine may have.
#
# Usage: hack/containerd/up.sh up|down|status --state-dir DIR [--exit-with PID] [--network MODE]
#                              [--e2e-images LIST --e2e-bin-dir DIR --kube-src DIR]
#
#   up      write DIR/config.toml, start containerd in the background (PID in DIR/containerd.pid,
#           log in DIR/containerd.log), wait for its socket, import our busybox and pause images
#           (images.sh). Idempotent: reports the running one. On a DIR whose containerd stopped,
#           starts it again on the same state, and it finds its running pods (as after a restart).
#           --exit-with PID: also run `down` when process PID exits (the e2e tests pass their own,
#           so nothing outlives a test binary that is killed or times out).
#   down    stop every container (ctr tasks delete --force), then containerd by its PID; kill any
#           shim or container left by a containerd that died (their recorded PIDs); unmount
#           everything under DIR and remove DIR.
#   status  the PID, socket, version and snapshotter, or the tail of the log of one that died.
#
#   --network loopback (default)  a loopback-only CNI network: pods must use hostNetwork: true.
#   --network bridge              a pod network: CNI bridge (mkbr0, gateway 10.88.0.1, hairpin) +
#                                 host-local (10.88.0.0/16, its leases under DIR/cni/ipam) + portmap
#                                 (hostPort), from Debian's containernetworking-plugins. Every pod
#                                 gets its own IP, reachable from the node and from other pods. It
#                                 creates a bridge, veths, routes and (portmap) iptables rules, so
#                                 it refuses to run in the host's network namespace: run it inside
#                                 one of your own (unshare --net), as hack/conformance/run.sh does,
#                                 and all of it dies with that namespace.
#   --e2e-images LIST --e2e-bin-dir DIR --kube-src DIR [--etcd-bin-dir DIR]   also build and
#                                 import the upstream e2e images LIST names (`e2e.test
#                                 --list-images`; see images.sh).
#   --kubeadm-images LIST --kubeadm-bin-dir DIR   also build and import the images kubeadm runs
#                                 (`kubeadm config images list`; see images.sh).
#   --csi-hostpath                also build and import our CSI driver's image (see images.sh).
#   --pod-subnet CIDR             bridge mode: the pods' subnet (default 10.88.0.0/16; gateway .1)
#
# Point minikubelet at it with --container-runtime-endpoint unix://DIR/containerd.sock, and crictl
# with --runtime-endpoint unix://DIR/containerd.sock. Install what it needs with install.sh.
#
# The config is `containerd config default` (containerd 1.6 in Debian 12) with these changes:
#   root, state, grpc.address, opt path, runc Root   private, under DIR
#   sandbox_image = docker.io/minikubelet/pause:local   our local pause image (no registry here)
#   snapshotter = overlayfs, or native where an overlay mount fails (e.g. on overlay itself)
#   restrict_oom_score_adj = true   runc cannot lower oom_score_adj without CAP_SYS_RESOURCE (a
#                                   VM's or container's root often lacks it); without this every
#                                   sandbox fails with "can't get final child's PID from pipe: EOF"
#   SystemdCgroup = false           cgroupfs: minikubelet has no systemd cgroup driver
#   cni conf_dir / bin_dir          DIR/cni/net.d holds one network, written before containerd
#                                   starts (NetworkReady=true comes from it). loopback mode: pods
#                                   must use hostNetwork: true (no pod IPs); others fail with
#                                   "failed to find network info for sandbox". bridge mode: above.
#   netns_mounts_under_state_dir    network namespaces under DIR, not /var/run/netns
#   stream_server_address = 127.0.0.1   exec/attach/port-forward streams on loopback only
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() { echo "usage: up.sh up|down|status --state-dir DIR [--exit-with PID] [--network loopback|bridge] [--e2e-images LIST --e2e-bin-dir DIR --kube-src DIR [--etcd-bin-dir DIR]] [--kubeadm-images LIST --kubeadm-bin-dir DIR] [--csi-hostpath] [--pod-subnet CIDR]" >&2; exit 2; }
verb=${1:-}; [[ $verb == up || $verb == down || $verb == status ]] || usage; shift
state_dir="" exit_with="" network=loopback images_args=() pod_subnet=10.88.0.0/16
while (( $# )); do
  case $1 in
    --state-dir) state_dir=${2:?}; shift 2 ;;
    --exit-with) exit_with=${2:?}; shift 2 ;;
    --network) network=${2:?}; shift 2 ;;
    --pod-subnet) pod_subnet=${2:?}; shift 2 ;;
    --e2e-images|--e2e-bin-dir|--kube-src|--etcd-bin-dir|--kubeadm-images|--kubeadm-bin-dir) images_args+=("$1" "${2:?}"); shift 2 ;;
    --csi-hostpath) images_args+=("$1"); shift ;;
    *) usage ;;
  esac
done
[[ -n $state_dir ]] || usage
[[ $network == loopback || $network == bridge ]] || usage
if [[ ! -d $state_dir ]]; then
  [[ $verb == up ]] || { echo "containerd: not running (no state dir $state_dir)"; [[ $verb == down ]]; exit; }
  mkdir -p "$state_dir"
  new_state_dir=1 # removed again if up refuses to start
fi
state_dir=$(cd "$state_dir" && pwd)

sock=$state_dir/containerd.sock
config=$state_dir/config.toml
pidfile=$state_dir/containerd.pid
log=$state_dir/containerd.log
watchdog_pidfile=$state_dir/watchdog.pid
pause_image=docker.io/minikubelet/pause:local

# ctr talks to our containerd, in the CRI plugin's namespace.
ctr_() { ctr --address "$sock" -n k8s.io "$@"; }

# running: is the PID in the pid file our containerd (started with our config)?
running() {
  [[ -f $pidfile ]] || return 1
  local pid; pid=$(<"$pidfile")
  [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "--config $config"
}

# set_toml SECTION KEY VALUE: set `KEY = VALUE` in [SECTION] ("" for the top level) of config.toml,
# as `containerd config default` lays it out; fail if the key is not there (another containerd
# version), rather than write a config that silently keeps the default.
set_toml() {
  awk -v section="$1" -v key="$2" -v value="$3" '
    /^[[:space:]]*\[/ { header = $0; gsub(/^[[:space:]]+|[[:space:]]+$/, "", header); current = substr(header, 2, length(header) - 2) }
    current == section && $1 == key && $2 == "=" { sub(/=.*/, "= " value); found = 1 }
    { print }
    END { exit !found }
  ' "$config" >"$config.tmp" || { echo "up.sh: no key $2 in [$1] of containerd's default config" >&2; exit 1; }
  mv "$config.tmp" "$config"
}
q() { printf '"%s"' "$1"; } # a TOML string

# snapshotter: overlayfs if an overlay mount works in DIR, else native (copies, slower, works anywhere).
snapshotter() {
  local d=$state_dir/overlay-probe
  mkdir -p "$d/lower" "$d/upper" "$d/work" "$d/merged"
  if mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null; then
    umount "$d/merged"; rm -rf "$d"; echo overlayfs
  else
    rm -rf "$d"; echo native
  fi
}

cni_bin_dir() {
  local d
  for d in /usr/lib/cni /opt/cni/bin; do [[ -x $d/loopback ]] && { echo "$d"; return; }; done
  echo "up.sh: the CNI loopback plugin is missing (install.sh installs containernetworking-plugins)" >&2
  exit 1
}

# private_netns: is this a network namespace of our own, not the host's? /proc/1/ns/net cannot
# always be read (to compare with ours), so also: the host's namespace has a default route, or a
# device a private namespace of ours would not have (ours: lo, the pod bridge mkbr0, its veths).
private_netns() {
  if [[ -r /proc/1/ns/net && $(readlink /proc/1/ns/net) == "$(readlink /proc/self/ns/net)" ]]; then return 1; fi
  [[ -z $(ip route show default 2>/dev/null; ip -6 route show default 2>/dev/null) ]] || return 1
  local name
  while read -r name; do
    name=${name%%@*}
    [[ $name == lo || $name == mkbr0 || $name == veth* ]] || return 1
  done < <(ip -o link show | awk -F': ' '{ print $2 }')
}

# gateway CIDR: the subnet's first address (10.88.0.0/16 → 10.88.0.1), the bridge's.
gateway() {
  local ip=${1%/*} a b c d
  IFS=. read -r a b c d <<<"$ip"
  echo "$a.$b.$c.$((d + 1))"
}

# write_cni_config: the one network containerd's CRI plugin uses (see --network above).
write_cni_config() {
  local dir=$state_dir/cni/net.d
  mkdir -p "$dir"
  rm -f "$dir"/*.conflist
  if [[ $network == loopback ]]; then
    cat >"$dir/10-minikubelet-loopback.conflist" <<'EOF'
{"cniVersion": "0.4.0", "name": "minikubelet-loopback", "plugins": [{"type": "loopback"}]}
EOF
    return
  fi
  cat >"$dir/10-minikubelet-pods.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "minikubelet-pods",
  "plugins": [
    {
      "type": "bridge", "bridge": "mkbr0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$state_dir/cni/ipam",
        "ranges": [[{"subnet": "$pod_subnet", "gateway": "$(gateway "$pod_subnet")"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

write_config() {
  local snap=$1 cri='plugins."io.containerd.grpc.v1.cri"' cni_bin
  cni_bin=$(cni_bin_dir)
  containerd config default >"$config"
  set_toml "" root "$(q "$state_dir/root")"
  set_toml "" state "$(q "$state_dir/state")"
  set_toml "" disabled_plugins '["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]'
  set_toml grpc address "$(q "$sock")"
  set_toml 'plugins."io.containerd.internal.v1.opt"' path "$(q "$state_dir/opt")"
  set_toml "$cri" sandbox_image "$(q "$pause_image")"
  set_toml "$cri" restrict_oom_score_adj true
  set_toml "$cri" netns_mounts_under_state_dir true
  set_toml "$cri" stream_server_address '"127.0.0.1"'
  set_toml "$cri.cni" bin_dir "$(q "$cni_bin")"
  set_toml "$cri.cni" conf_dir "$(q "$state_dir/cni/net.d")"
  set_toml "$cri.containerd" snapshotter "$(q "$snap")"
  set_toml "$cri.containerd.runtimes.runc.options" SystemdCgroup false
  set_toml "$cri.containerd.runtimes.runc.options" Root "$(q "$state_dir/runc")"
  # The CNI config must exist before containerd starts: its CRI plugin reports NetworkReady from it.
  write_cni_config
}

# start_watchdog: run `down` once process $exit_with is gone (one watchdog per state dir).
start_watchdog() {
  if [[ -f $watchdog_pidfile ]] && kill -0 "$(<"$watchdog_pidfile")" 2>/dev/null; then return; fi
  # shellcheck disable=SC2016 # the inner script's $1 $2 $3 are its own arguments
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" down --state-dir "$3"' \
    watchdog "$exit_with" "$here/up.sh" "$state_dir" >>"$state_dir/watchdog.log" 2>&1 </dev/null &
  echo $! >"$watchdog_pidfile"
}

up() {
  if running; then
    echo "containerd is already running (PID $(<"$pidfile")): unix://$sock"
    return
  fi
  if [[ $network == bridge ]] && ! private_netns; then
    echo "up.sh: --network bridge creates a bridge, veths, routes and iptables rules: it runs only in a network" >&2
    echo "namespace of your own (e.g. unshare --net), never in the host's; this one has a default route or a" >&2
    echo "device of the host ($(ip -o link show | awk -F': ' '{ printf "%s ", $2 }'))" >&2
    [[ -z ${new_state_dir:-} ]] || rmdir "$state_dir" 2>/dev/null || true
    exit 1
  fi
  for tool in containerd ctr runc; do
    command -v $tool >/dev/null || { echo "up.sh: $tool is not installed: run hack/containerd/install.sh" >&2; exit 1; }
  done
  if (( ${#sock} > 107 )); then
    echo "up.sh: the socket path $sock is longer than a unix socket allows (107 bytes): use a shorter --state-dir" >&2
    exit 1
  fi
  local snap; snap=$(snapshotter)
  write_config "$snap"
  rm -f "$sock"
  local log_start=0
  [[ -f $log ]] && log_start=$(stat -c %s "$log")
  # setsid: its own session, so a Ctrl-C meant for a terminal's foreground job does not stop it.
  setsid containerd --config "$config" >>"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$pidfile"
  [[ -n $exit_with ]] && start_watchdog
  # Ready when ctr gets an answer and the CRI plugin has started its streaming server (the last
  # step of its start: before it, CRI calls fail with "server is not initialized yet").
  local i
  for (( i = 0; i < 300; i++ )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "up.sh: containerd exited while starting; the end of $log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    if [[ -S $sock ]] && ctr_ version >/dev/null 2>&1 && tail -c "+$((log_start + 1))" "$log" | grep -q "Start streaming server"; then break; fi
    sleep 0.1
  done
  (( i < 300 )) || { echo "up.sh: containerd did not answer on $sock within 30 s; see $log" >&2; exit 1; }
  "$here/images.sh" --address "$sock" --snapshotter "$snap" ${images_args[@]+"${images_args[@]}"}
  echo "containerd is ready (PID $pid, snapshotter $snap, network $network): unix://$sock"
}

# our_shims: the PIDs of our containerd's shims (containerd-shim-runc-v2 … -address DIR/containerd.sock).
our_shims() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- "-address $sock " && basename "$(dirname "$f")"
  done
  return 0
}

# kill_recorded SIGNAL PIDFILE MATCH: kill the process a pid file names, if it still is what
# MATCH (a string in its cgroup or command line) says it is — a PID can be reused.
kill_recorded() {
  local sig=$1 file=$2 match=$3 pid
  [[ -f $file ]] || return 0
  pid=$(<"$file")
  if [[ -r /proc/$pid/cmdline ]] && cat "/proc/$pid/cgroup" "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ' | grep -qF -- "$match"; then
    kill "-$sig" "$pid" 2>/dev/null || true
  fi
}

down() {
  local i
  if [[ -f $watchdog_pidfile && $(<"$watchdog_pidfile") != "$$" ]]; then
    kill "$(<"$watchdog_pidfile")" 2>/dev/null || true
  fi
  rm -f "$watchdog_pidfile"
  if running; then
    local pid id; pid=$(<"$pidfile")
    # Containers first: a stopped containerd leaves its shims and containers running (by design,
    # so it can restart under them); down means nothing of it is left.
    for id in $(ctr_ tasks ls -q 2>/dev/null); do
      ctr_ tasks delete --force "$id" >/dev/null 2>&1 || true
    done
    kill -TERM "$pid" 2>/dev/null || true
    for (( i = 0; i < 100; i++ )); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # What a containerd that died left running: each container, by the PID its shim recorded …
  local bundle shim ids=()
  for bundle in "$state_dir"/state/io.containerd.runtime.v2.task/*/*/; do
    [[ -f $bundle/init.pid ]] || continue
    ids+=("$(basename "$bundle")")
    kill_recorded KILL "$bundle/init.pid" "${ids[-1]}"
  done
  # … and its shims, which outlive containerd by design: they name our socket on their command line.
  for shim in $(our_shims); do
    kill -TERM "$shim" 2>/dev/null || true
    for (( i = 0; i < 30; i++ )); do [[ -d /proc/$shim ]] || break; sleep 0.1; done
    kill -KILL "$shim" 2>/dev/null || true
  done
  # … and the (now empty) cgroups runc made for those containers, /k8s.io/<id> in each hierarchy.
  for id in "${ids[@]}"; do
    for (( i = 0; i < 30; i++ )); do
      rmdir /sys/fs/cgroup/k8s.io/"$id" /sys/fs/cgroup/*/k8s.io/"$id" 2>/dev/null || true
      compgen -G "/sys/fs/cgroup/*/k8s.io/$id" >/dev/null || [[ -d /sys/fs/cgroup/k8s.io/$id ]] || break
      sleep 0.1
    done
  done
  # … and what the CNI library caches outside DIR, in /var/lib/cni/results (containerd 1.6 has no
  # setting for it): one file per sandbox and interface, removed by a CNI DEL that a forced stop
  # skips. Only our sandboxes' files, by their IDs.
  local sandbox
  for sandbox in "$state_dir"/root/io.containerd.grpc.v1.cri/sandboxes/*/; do
    [[ -d $sandbox ]] || continue
    rm -f /var/lib/cni/results/*-"$(basename "$sandbox")"-*
  done
  # Unmount everything under DIR (rootfs overlays, shm, netns), deepest first.
  local mnt
  while read -r mnt; do
    umount "$mnt" 2>/dev/null || umount -l "$mnt" || true
  done < <(awk -v d="$state_dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
  if awk -v d="$state_dir/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "up.sh: mounts are left under $state_dir; not removing it" >&2
    exit 1
  fi
  rm -rf "$state_dir"
  echo "containerd in $state_dir is down"
}

status() {
  if running; then
    local snap
    snap=$(awk -F'"' '/^[[:space:]]*snapshotter = / { print $2; exit }' "$config")
    echo "containerd: running, PID $(<"$pidfile"), snapshotter $snap"
    echo "endpoint:   unix://$sock"
    ctr_ version 2>&1 | sed -n 's/^  *Version: */version:    /p' | tail -n 1
    echo "images:"; ctr_ images ls -q | sed 's/^/  /'
    echo "containers: $(ctr_ containers ls -q | wc -l)"
  else
    echo "containerd: not running (state dir $state_dir)"
    [[ -f $log ]] && { echo "the end of $log:"; tail -n 20 "$log"; }
    return 1
  fi
}

"$verb"

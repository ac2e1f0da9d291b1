#!/usr/bin/env bash
# kubeadm.sh: `make conformance SUITE=conformance`: upstream's `[Conformance]` suite (k8s.io/kubernetes
# v1.36.3 e2e.test, built by build.sh) against the kubeadm cluster of hack/kubeadm/up.sh — two
# minikubelet nodes on containerd, kube-proxy and CoreDNS on them — and the same table as
# `make conformance` (per Describe group, report/).
#
#   1. outside: build e2e.test, ginkgo, agnhost, nnp, and the nginx and sample-apiserver the full
#      suite's images need (build.sh --suite-images), kubectl (hack/cluster/build.sh),
#      the report program; `e2e.test --list-images`;
#   2. the cluster: if hack/kubeadm/up.sh's run is not up, `KUBEADM_NODES=2 up.sh up` (and, since
#      the cluster is ours, the control-plane node's NoSchedule taint removed: two schedulable
#      nodes, as the specs that spread pods over nodes want); a cluster the user brought up is used
#      as it is, and left running;
#   3. the e2e images (agnhost 2.63.0 and 2.55, busybox, nonroot, nonewprivs, pause,
#      glibc-dns-testing, nginx, kitten, nautilus, sample-apiserver: images.sh
#      --e2e-images) built and imported into each node's containerd under their exact names,
#      through its socket in the kubeadm state dir (a unix socket: no namespace is entered);
#   4. ginkgo and e2e.test in the control-plane node's network namespace (`nsenter -n`, by the PID
#      up.sh records: as `make kubeadm-shell`), where pod IPs, node IPs and the API server
#      (10.213.0.1:6443) are reachable, with kubeadm's admin.conf (its server is that address);
#      the mount namespace stays the host's, so results land in $OUT;
#   5. the table; then, if this run brought the cluster up, `up.sh down`: the host as before.
#
# Environment (as run.sh, with other defaults):
#   FOCUS    ginkgo --focus   (default '\[Conformance\]')
#   SKIP     ginkgo --skip    (default '\[Slow\]|\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Feature:|\[Alpha\]|\[Beta\]')
#   PROCS    parallel ginkgo processes (default 8: two nodes' pods and a whole control plane share
#            the machine with the specs)
#   TIMEOUT  ginkgo --timeout (default 3h)
#   OUT      results and logs (default _output/conformance-kubeadm)
#   KUBEADM_OUT  hack/kubeadm/up.sh's state dir (default _output/kubeadm)
#   E2E_ARGS, GINKGO_ARGS  extra flags for e2e.test and ginkgo
# Needs root (namespaces, containerd) and bin/minikubelet (make build; make conformance does it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"
OUT=${OUT:-_output/conformance-kubeadm}
KUBEADM_OUT=${KUBEADM_OUT:-_output/kubeadm}
mkdir -p "$OUT" "$KUBEADM_OUT"
OUT=$(cd "$OUT" && pwd) KUBEADM_OUT=$(cd "$KUBEADM_OUT" && pwd)
FOCUS=${FOCUS:-'\[Conformance\]'}
SKIP=${SKIP:-'\[Slow\]|\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Feature:|\[Alpha\]|\[Beta\]'}
PROCS=${PROCS:-8} TIMEOUT=${TIMEOUT:-3h}
CP_NODE=minikubelet-cp # up.sh's control-plane node
bin=$OUT/bin logs=$OUT/logs

# phase NAME: print how long the previous phase took (to the terminal and $OUT/phases.txt).
phase_name="" phase_start=$SECONDS
phase() {
  if [[ -n $phase_name ]]; then
    printf '%-28s %5ds\n' "$phase_name" $((SECONDS - phase_start)) | tee -a "$OUT/phases.txt"
  fi
  phase_name=$1 phase_start=$SECONDS
  [[ -z $1 ]] || echo "== $1"
}

# kubeadm_up VERB: hack/kubeadm/up.sh on the state dir this run uses.
kubeadm_up() { OUT=$KUBEADM_OUT KUBEADM_NODES=${KUBEADM_NODES:-2} "$repo/hack/kubeadm/up.sh" "$@"; }

# cluster_pid: the control-plane node's in-namespace run (up.sh writes its PID), if it runs.
cluster_pid() {
  local f=$KUBEADM_OUT/inner.pid
  [[ -f $f ]] && kill -0 "$(<"$f")" 2>/dev/null && cat "$f"
}

kubectl() { "$(<"$bin/k8s-bin-dir")/kubectl" --kubeconfig "$KUBEADM_OUT/admin.kubeconfig" "$@"; }

brought_up=0 ginkgo_pid="" tail_pid="" status=0

# stop_ginkgo: SIGINT to ginkgo's process group, as a terminal's Ctrl-C (it does not pass a signal
# on to its e2e.test processes), so the running specs clean up and ginkgo writes its report;
# SIGKILL after 180 s.
stop_ginkgo() {
  local i
  [[ -n $ginkgo_pid ]] && kill -0 "$ginkgo_pid" 2>/dev/null || return 0
  kill -INT -- "-$ginkgo_pid" 2>/dev/null || true
  for (( i = 0; i < 1800; i++ )); do kill -0 "$ginkgo_pid" 2>/dev/null || return 0; sleep 0.1; done
  echo "conformance: ginkgo (PID $ginkgo_pid) did not stop in 180 s; SIGKILL" >&2
  kill -KILL "$ginkgo_pid" 2>/dev/null || true
}

# cleanup: on exit, Ctrl-C or SIGTERM: ginkgo, then the cluster if this run brought it up.
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  (( status != 0 )) || status=$rc
  stop_ginkgo
  [[ -z $tail_pid ]] || kill "$tail_pid" 2>/dev/null || true
  if (( brought_up )); then
    phase "kubeadm down"
    kubeadm_up down >>"$logs/kubeadm-down.log" 2>&1 || { echo "conformance: kubeadm down failed; see $logs/kubeadm-down.log" >&2; status=1; }
  else
    echo "conformance: the kubeadm cluster was up before this run: left running (make kubeadm-down ends it)"
  fi
  phase ""
  report
  exit "$status"
}

# build: what phase 1 of run.sh builds, minus the control plane's components: up.sh builds those.
build() {
  phase "build e2e.test, ginkgo, agnhost, nnp"
  hack/containerd/install.sh >/dev/null # dig and the rest the e2e images copy (images.sh)
  hack/cluster/build.sh >"$bin/k8s-bin-dir"
  "$here/build.sh" --suite-images >"$bin/conformance-bin-dir" # and nginx, sample-apiserver
  (cd "$here" && go build -o "$bin/report" ./report)
  (cd "$here" && go list -m -f '{{.Dir}}' k8s.io/kubernetes) >"$bin/kube-src"
  "$(<"$bin/conformance-bin-dir")/e2e.test" --list-images >"$OUT/images.txt"
}

# cluster: up.sh's cluster, brought up (two nodes) unless it runs; nodes Ready.
cluster() {
  phase "kubeadm cluster"
  if cluster_pid >/dev/null; then
    echo "using the running kubeadm cluster (PID $(cluster_pid), $KUBEADM_OUT)"
  else
    brought_up=1
    kubeadm_up up >"$logs/kubeadm-up.log" 2>&1 || {
      echo "conformance: make kubeadm-up failed; the end of $logs/kubeadm-up.log:" >&2
      tail -n 30 "$logs/kubeadm-up.log" >&2; exit 1
    }
    # Ours: the control plane schedules pods too, so the suite has two nodes to spread pods on.
    kubectl taint nodes "$CP_NODE" node-role.kubernetes.io/control-plane:NoSchedule-
  fi
  kubectl wait --for=condition=Ready nodes --all --timeout=120s >/dev/null
  kubectl get nodes -o wide
}

# import_images: the e2e images into each node's containerd (its socket and snapshotter from its
# state dir), as make conformance imports them into its one node's.
import_images() {
  phase "e2e images → nodes"
  local dir sock snap n=0
  for dir in "$KUBEADM_OUT/containerd" "$KUBEADM_OUT"/node[0-9]*/containerd; do
    sock=$dir/containerd.sock
    [[ -S $sock ]] || continue
    n=$((n + 1))
    snap=$(awk -F'"' '/^[[:space:]]*snapshotter = / { print $2; exit }' "$dir/config.toml")
    GOPROXY=off hack/containerd/images.sh --address "$sock" --snapshotter "$snap" --e2e-images "$OUT/images.txt" \
      --e2e-bin-dir "$(<"$bin/conformance-bin-dir")" --kube-src "$(<"$bin/kube-src")" >"$logs/images-node$n.txt"
    echo "node $n ($dir): imported $(grep '^built ' "$logs/images-node$n.txt" | cut -d' ' -f2 | tr '\n' ' ')"
  done
  (( n > 0 )) || { echo "conformance: no containerd socket under $KUBEADM_OUT" >&2; exit 1; }
  echo "not built: $(grep -c '^not built' "$logs/images-node1.txt") other images e2e.test names (list: $logs/images-node1.txt)"
}

# specs: ginkgo and e2e.test in the control-plane node's network namespace.
specs() {
  local pid conf_bin k8s_bin nodes
  pid=$(cluster_pid) || { echo "conformance: the kubeadm cluster is not running" >&2; exit 1; }
  conf_bin=$(<"$bin/conformance-bin-dir") k8s_bin=$(<"$bin/k8s-bin-dir")
  nodes=$(kubectl get nodes --no-headers | wc -l)
  # kubeadm's admin.conf: its server, 10.213.0.1:6443, is the API server as seen inside.
  (umask 077; cp "$KUBEADM_OUT/overlay/_etc/upper/kubernetes/admin.conf" "$OUT/admin.kubeconfig")
  phase "specs (ginkgo --procs=$PROCS)"
  # shellcheck disable=SC2086 # GINKGO_ARGS and E2E_ARGS hold several flags: split on purpose
  setsid setpriv --pdeathsig TERM -- nsenter -t "$pid" -n -- \
    "$conf_bin/ginkgo" --procs="$PROCS" --focus="$FOCUS" --skip="$SKIP" --timeout="$TIMEOUT" \
    --no-color --silence-skips --json-report=report.json --junit-report=junit.xml --output-dir="$OUT" \
    ${GINKGO_ARGS:-} "$conf_bin/e2e.test" -- \
    --kubeconfig="$OUT/admin.kubeconfig" --kubectl-path="$k8s_bin/kubectl" \
    --provider=skeleton --num-nodes="$nodes" --node-os-distro=debian \
    --report-dir="$OUT/report" --e2e-output-dir="$OUT/e2e-output" \
    --system-pods-startup-timeout=2m --allowed-not-ready-nodes=0 \
    ${E2E_ARGS:-} >"$logs/ginkgo.log" 2>&1 </dev/null &
  ginkgo_pid=$!
  tail -n +1 -f --pid="$ginkgo_pid" "$logs/ginkgo.log" &
  tail_pid=$!
  wait "$ginkgo_pid" || status=$? # non-zero when a spec failed
  ginkgo_pid=""
  wait "$tail_pid" || true
  tail_pid=""
}

# report: the table (report/) and every spec's result in $OUT/results.txt.
# shellcheck disable=SC2317 # reached through cleanup
report() {
  [[ -f $OUT/report.json ]] || { echo "conformance: no report ($OUT/report.json): the run stopped before ginkgo wrote one; see $logs" >&2; status=1; return; }
  echo
  echo "Spec focus: $FOCUS"
  echo "Spec skip:  $SKIP"
  "$bin/report" --json "$OUT/report.json" --out "$OUT/results.txt" | tee "$OUT/table.txt" || status=1
  echo "Phases (seconds): $(paste -sd';' "$OUT/phases.txt" | tr -s ' ')"
  echo "Logs: $logs (ginkgo.log, kubeadm-up.log, images-node*.txt); the nodes' logs: $KUBEADM_OUT/logs (kept until the next kubeadm-up)"
}

if [[ $(id -u) != 0 ]]; then
  echo "conformance: needs root: the kubeadm cluster's namespaces and containerd" >&2
  exit 1
fi
for tool in unshare setpriv nsenter ip; do
  command -v $tool >/dev/null || { echo "conformance: $tool is missing (util-linux, iproute2)" >&2; exit 1; }
done
rm -rf "$logs" "$OUT/phases.txt" "$OUT/report" "$OUT/report.json" "$OUT/junit.xml" "$OUT/results.txt" "$OUT/table.txt"
mkdir -p "$bin" "$logs" "$OUT/report"
trap cleanup EXIT
trap 'status=130; exit 130' INT
trap 'status=143; exit 143' TERM
build
cluster
import_images
specs

#!/usr/bin/env bash
# run.sh: `make conformance`: run upstream's node conformance specs (k8s.io/kubernetes v1.36.3
# test/e2e, built by build.sh) against minikubelet on containerd, all inside a network namespace
# of its own, and print passed / failed / skipped per Describe group.
#
#   1. outside, where the Go module proxy and Debian are reachable: install containerd and the CNI
#      plugins (hack/containerd/install.sh), build the control plane (hack/cluster/build.sh),
#      e2e.test, ginkgo, agnhost and nnp (build.sh), the cluster and report programs, and list the
#      images the suite names (e2e.test --list-images);
#   2. `unshare --net --mount` runs this script again (--in-netns) in a new network namespace (and
#      a private mount namespace: containerd's overlays and the kubelet's tmpfs for emptyDirs of
#      medium Memory stay in it): lo up, with
#      the node's address 10.213.0.1/32 on it too, then the control plane (127.0.0.1),
#      containerd with the pod network (hack/containerd/up.sh --network bridge: bridge mkbr0,
#      pods in 10.88.0.0/16) and the e2e images, and minikubelet with --node-ip 10.213.0.1 (not a
#      loopback address, so the API server's node proxy — kubectl logs/exec — reaches it); then
#      ginkgo runs e2e.test in parallel;
#   3. outside again: the table (report/), and every spec with its result in $OUT/results.txt.
#
# Everything that makes interfaces, routes, iptables rules or mounts runs in those namespaces;
# nothing in the host's changes. Every process is stopped by its PID on exit, Ctrl-C or SIGTERM (and by
# PR_SET_PDEATHSIG if this script is killed outright); the namespace goes with its last process.
#
# Environment:
#   FOCUS    ginkgo --focus   (default '\[NodeConformance\]': every node conformance spec of
#            test/e2e — sig-node, sig-storage and sig-network — 236 after SKIP)
#   SKIP     ginkgo --skip    (default '\[Slow\]|\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Feature:')
#   PROCS    parallel ginkgo processes (default 16: the specs mostly wait — for pods, probes, timeouts,
#            a dozen of them 4 minutes each — so even on 2 cores 16 keep the machine busy without
#            starving it: the 172 passing specs took 830 s with 8, 510 s with 16)
#   TIMEOUT  ginkgo --timeout for the whole run (default 3h)
#   OUT      results and logs (default _output/conformance)
#   E2E_ARGS extra flags for e2e.test, GINKGO_ARGS extra flags for ginkgo
#   MINIKUBELET the minikubelet binary to run (default bin/minikubelet)
#   KUBELET_ARGS extra flags for minikubelet, e.g. --debug-keepalive while Delve holds it at a
#            breakpoint (docs/conformance-map.md: step through one spec)
#   PASSING  a list of spec names (hack/conformance/passing.txt): run exactly those (FOCUS is
#            ignored) and fail unless every one passed — `make test-conformance`
# Needs root (namespaces, containerd) and bin/minikubelet (make build; make conformance does it).
#   SUITE    node (default): what this script runs; conformance: the `[Conformance]` suite against
#            the kubeadm cluster (two minikubelet nodes, kube-proxy, CoreDNS): kubeadm.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ${SUITE:-node} in
  node) ;;
  conformance) exec "$here/kubeadm.sh" ;;
  *) echo "conformance: SUITE=$SUITE: unknown; node (upstream's node specs, the default) or conformance (the [Conformance] suite on the kubeadm cluster)" >&2; exit 2 ;;
esac
repo=$(cd "$here/../.." && pwd)
cd "$repo"
OUT=${OUT:-_output/conformance}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export OUT
export FOCUS=${FOCUS:-'\[NodeConformance\]'}
export SKIP=${SKIP:-'\[Slow\]|\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Feature:'}
export PROCS=${PROCS:-16} TIMEOUT=${TIMEOUT:-3h}
NODE_IP=10.213.0.1
NODE_NAME=minikubelet-conformance
bin=$OUT/bin   # the programs this run uses, built in phase 1
logs=$OUT/logs

# phase NAME: print how long the previous phase took (to the terminal and $OUT/phases.txt).
phase_name="" phase_start=$SECONDS
phase() {
  if [[ -n $phase_name ]]; then
    printf '%-28s %5ds\n' "$phase_name" $((SECONDS - phase_start)) | tee -a "$OUT/phases.txt"
  fi
  phase_name=$1 phase_start=$SECONDS
  [[ -z $1 ]] || echo "== $1"
}

# ---------------------------------------------------------------------------------------------
# Phase 2: inside the private network namespace.
# ---------------------------------------------------------------------------------------------
cluster_pid="" kubelet_pid="" ginkgo_pid="" tail_pid="" status=0

# own PROGRAM ARGS… &: run a long-lived process of this run in the background, in a session of its
# own — so that a Ctrl-C on the terminal reaches only the scripts, and cleanup stops each process in
# order (ginkgo first, which must still write its report) — and dying with this script
# (PR_SET_PDEATHSIG) if the script is killed outright. Always with &: exec replaces the background
# subshell, so $! is the program's PID (setsid and setpriv exec it in turn).
own() { exec setsid setpriv --pdeathsig TERM -- "$@"; }

# stop PID NAME SECONDS [group]: SIGTERM, wait, then SIGKILL — only that process, by its PID.
# With "group": SIGINT to its process group first, as a terminal's Ctrl-C does (ginkgo does not
# pass a signal on to its e2e.test processes: they get it from the terminal, with it).
# shellcheck disable=SC2317 # reached through the EXIT trap (cleanup), which shellcheck cannot see
stop() {
  local pid=$1 name=$2 i start=$SECONDS
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
  if [[ ${4:-} == group ]]; then kill -INT -- "-$pid" 2>/dev/null || true; else kill -TERM "$pid" 2>/dev/null || true; fi
  for (( i = 0; i < $3 * 10; i++ )); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "stopped $name (PID $pid) in $((SECONDS - start)) s" >>"$logs/cleanup.log"
      return 0
    fi
    sleep 0.1
  done
  echo "conformance: $name (PID $pid) did not stop in $3 s; SIGKILL" | tee -a "$logs/cleanup.log" >&2
  kill -KILL "$pid" 2>/dev/null || true
}

# cleanup: the inner run's EXIT trap: stop everything it started, by PID, in reverse order.
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
  trap - EXIT INT TERM
  phase "clean up"
  stop "$ginkgo_pid" ginkgo 180 group # the specs stop and clean up; ginkgo writes its report
  stop "$tail_pid" "tail of ginkgo.log" 2
  stop "$kubelet_pid" minikubelet 15
  [[ ! -f $OUT/containerd/containerd.log ]] || cp "$OUT/containerd/containerd.log" "$logs/"
  local start=$SECONDS
  hack/containerd/up.sh down --state-dir "$OUT/containerd" >>"$logs/cleanup.log" || status=1
  echo "containerd down in $((SECONDS - start)) s" >>"$logs/cleanup.log"
  [[ ! -d $OUT/cluster/logs ]] || cp -r "$OUT/cluster/logs/." "$logs/"
  stop "$cluster_pid" "the control plane" 60 # --foreground: it stops its components, cleans up
  # Anything else still in this namespace was started by this run (its descendants): name it
  # and stop it, so that the namespace ends with us.
  local ns d pid
  ns=$(readlink /proc/self/ns/net)
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid != "$$" && $(readlink "$d/ns/net" 2>/dev/null) == "$ns" && -r $d/cmdline ]] || continue
    echo "conformance: still running in the namespace: $pid $(tr '\0' ' ' <"$d/cmdline" | cut -c1-120)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  done
  phase ""
  exit "$status"
}

kubectl() { "$(<"$bin/k8s-bin-dir")/kubectl" --kubeconfig "$OUT/cluster/admin.kubeconfig" "$@"; }

inner() {
  local k8s_bin conf_bin
  k8s_bin=$(<"$bin/k8s-bin-dir") conf_bin=$(<"$bin/conformance-bin-dir")
  # A build here (images.sh's two small programs) finds no network: fail at once, never wait.
  export GOPROXY=off

  trap cleanup EXIT
  trap 'status=130; exit 130' INT
  trap 'status=143; exit 143' TERM

  phase "network namespace"
  # A brand-new namespace has only lo (down): anything else means this is not ours.
  if [[ $(ip -o link show | awk -F': ' '$2 != "lo"' | wc -l) != 0 ]]; then
    echo "conformance: not a fresh network namespace; refusing to change it" >&2; exit 1
  fi
  # The node's address: not a loopback address (the API server's node proxy refuses those), on lo
  # because a dummy device needs a kernel module that is not everywhere. Pods reach it through
  # their default route, the bridge's 10.88.0.1.
  ip link set lo up
  ip addr add "$NODE_IP/32" dev lo

  phase "control plane up"
  # --foreground: it stays, and its components die with it (PR_SET_PDEATHSIG), as it does with
  # this script (own). Its state (PKI, kubeconfigs, etcd, logs) is in $OUT/cluster.
  own "$bin/cluster" up --foreground --state-dir "$OUT/cluster" --bin-dir "$k8s_bin" \
    >"$logs/cluster.log" 2>&1 &
  cluster_pid=$!
  local i
  for (( i = 0; i < 1200; i++ )); do
    grep -q "cluster is ready" "$logs/cluster.log" 2>/dev/null && break
    kill -0 "$cluster_pid" 2>/dev/null || { echo "conformance: the control plane did not start:" >&2; tail -n 30 "$logs/cluster.log" >&2; exit 1; }
    sleep 0.1
  done
  (( i < 1200 )) || { echo "conformance: the control plane was not ready in 120 s; see $logs/cluster.log" >&2; exit 1; }

  phase "containerd up + images"
  hack/containerd/up.sh up --state-dir "$OUT/containerd" --network bridge --exit-with $$ \
    --e2e-images "$OUT/images.txt" --e2e-bin-dir "$conf_bin" --kube-src "$(<"$bin/kube-src")" \
    --etcd-bin-dir "$k8s_bin" >"$logs/images.txt" # etcd: the Aggregator spec runs it
  grep -v '^not built' "$logs/images.txt"
  echo "not built: $(grep -c '^not built' "$logs/images.txt") other images e2e.test names (list: $logs/images.txt)"

  phase "node Ready"
  rm -rf "$OUT/node" # a new cluster has a new CA: join afresh
  # shellcheck disable=SC2086 # KUBELET_ARGS holds several flags: split on purpose
  own "$bin/minikubelet" \
    --bootstrap-kubeconfig "$OUT/cluster/bootstrap.kubeconfig" --root-dir "$OUT/node" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --address "$NODE_IP" \
    --container-runtime-endpoint "unix://$OUT/containerd/containerd.sock" \
    --debug-address 127.0.0.1:10256 -v 2 ${KUBELET_ARGS:-} >"$logs/minikubelet.log" 2>&1 &
  kubelet_pid=$!
  for (( i = 0; i < 120; i++ )); do
    kill -0 "$kubelet_pid" 2>/dev/null || { echo "conformance: minikubelet exited:" >&2; tail -n 30 "$logs/minikubelet.log" >&2; exit 1; }
    kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s >/dev/null 2>&1 && break
    sleep 1
  done
  (( i < 120 )) || { echo "conformance: node $NODE_NAME not Ready in 2 min; see $logs/minikubelet.log" >&2; exit 1; }
  kubectl get nodes -o wide

  phase "specs (ginkgo --procs=$PROCS)"
  # shellcheck disable=SC2086 # GINKGO_ARGS and E2E_ARGS hold several flags: split on purpose
  own "$conf_bin/ginkgo" --procs="$PROCS" --focus="$FOCUS" --skip="$SKIP" --timeout="$TIMEOUT" \
    --no-color --silence-skips --json-report=report.json --junit-report=junit.xml --output-dir="$OUT" \
    ${GINKGO_ARGS:-} "$conf_bin/e2e.test" -- \
    --kubeconfig="$OUT/cluster/admin.kubeconfig" --kubectl-path="$k8s_bin/kubectl" \
    --provider=local --num-nodes=1 --node-os-distro=debian \
    --container-runtime-endpoint="unix://$OUT/containerd/containerd.sock" \
    --report-dir="$OUT/report" --e2e-output-dir="$OUT/e2e-output" \
    --minStartupPods=0 --system-pods-startup-timeout=1m --allowed-not-ready-nodes=0 \
    ${E2E_ARGS:-} >"$logs/ginkgo.log" 2>&1 </dev/null &
  ginkgo_pid=$!
  tail -n +1 -f --pid="$ginkgo_pid" "$logs/ginkgo.log" &
  tail_pid=$!
  wait "$ginkgo_pid" || status=$? # non-zero when a spec failed: the exit status of the run
  ginkgo_pid=""
  wait "$tail_pid" || true
  tail_pid=""
}

if [[ ${1:-} == --in-netns ]]; then
  inner
  exit
fi

# ---------------------------------------------------------------------------------------------
# Phase 1: outside: install and build (these need the network), then phase 2, then the report.
# ---------------------------------------------------------------------------------------------
if [[ $(id -u) != 0 ]]; then
  echo "conformance: needs root: a network namespace of its own (unshare --net) and containerd" >&2
  exit 1
fi
for tool in unshare setpriv ip; do
  command -v $tool >/dev/null || { echo "conformance: $tool is missing (util-linux, iproute2)" >&2; exit 1; }
done
MINIKUBELET=${MINIKUBELET:-bin/minikubelet}
[[ -x $MINIKUBELET ]] || { echo "conformance: $MINIKUBELET is missing: make build (make conformance does it)" >&2; exit 1; }
rm -rf "$logs" "$OUT/phases.txt" "$OUT/report" "$OUT/report.json" "$OUT/junit.xml" "$OUT/results.txt" "$OUT/table.txt"
mkdir -p "$bin" "$logs" "$OUT/report"

phase "install containerd (apt)"
hack/containerd/install.sh
phase "build control plane"
hack/cluster/build.sh >"$bin/k8s-bin-dir"
phase "build e2e.test, ginkgo, agnhost, nnp"
"$here/build.sh" >"$bin/conformance-bin-dir"
phase "build helpers"
cp "$MINIKUBELET" "$bin/minikubelet"
(cd hack/cluster && go build -o "$bin/cluster" .)
(cd "$here" && go build -o "$bin/report" ./report)
# The source of the k8s.io/kubernetes module e2e.test is built from: the versions (tags) of the
# agnhost and nonewprivs images, and agnhost's TLS certificate.
(cd "$here" && go list -m -f '{{.Dir}}' k8s.io/kubernetes) >"$bin/kube-src"
"$(<"$bin/conformance-bin-dir")/e2e.test" --list-images >"$OUT/images.txt"
expect=()
if [[ -n ${PASSING:-} ]]; then
  FOCUS=$("$bin/report" --focus-regexp "$PASSING")
  expect=(--expect "$PASSING")
fi

# Ctrl-C reaches the inner run too (same process group); it stops everything, then we report.
interrupted=0
trap 'interrupted=1' INT TERM
phase ""
set +e
setpriv --pdeathsig TERM -- unshare --net --mount --propagation private -- "$0" --in-netns
inner_status=$?
set -e
if [[ -f $OUT/report.json ]]; then
  echo
  if [[ -n ${PASSING:-} ]]; then echo "Specs: those listed in $PASSING"; else echo "Spec focus: $FOCUS"; fi
  echo "Spec skip:  $SKIP"
  set +e
  "$bin/report" --json "$OUT/report.json" --out "$OUT/results.txt" "${expect[@]}" | tee "$OUT/table.txt"
  report_status=${PIPESTATUS[0]}
  set -e
  echo "Phases (seconds): $(paste -sd';' "$OUT/phases.txt" | tr -s ' ')"
  echo "Logs: $logs (ginkgo.log, minikubelet.log, containerd.log, the control plane's)"
else
  echo "conformance: no report ($OUT/report.json): the run stopped before ginkgo wrote one; see $logs" >&2
  exit 1
fi
(( interrupted == 0 )) || exit 130
(( report_status == 0 )) || exit 1
exit "$inner_status"

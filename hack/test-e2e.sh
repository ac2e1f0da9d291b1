#!/usr/bin/env bash
# test-e2e.sh: what `make test` runs between the unit tests and the conformance specs — every e2e
# package and the labs' walk-through in one `go test`, three packages at a time, the longest first
# (go test starts packages in the order it is given them), so that they end together. The e2e
# tests mostly wait (for pods, probes, timeouts), so while they run, the conformance binaries
# (hack/conformance/build.sh, ~10–20 min cold) are built in the background, niced, for
# `make test-conformance` to find ready. The background build is stopped if the tests fail or the
# run is interrupted; its log is _output/conformance-build.log.
#
# Usage: hack/test-e2e.sh [PROCS]      (default 3 packages at a time)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
procs=${1:-3}
root=$(go list -m)

# The longest packages first (seconds in a warm run: faults ~400, pods ~380, containerd ~260,
# kubeadm ~70 warm but ~270 cold, labs ~240), then the rest in go list's order.
first=(test/e2e/faults test/e2e/pods test/e2e/containerd test/e2e/kubeadm test/labs)
pkgs=()
for p in "${first[@]}"; do pkgs+=("$root/$p"); done
while read -r p; do
  [[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
done < <(go list ./test/e2e/... ./labs/...)

prebuild_pid=""
stop_prebuild() {
  if [[ -n $prebuild_pid ]] && kill -0 "$prebuild_pid" 2>/dev/null; then
    kill -- "-$prebuild_pid" 2>/dev/null || kill "$prebuild_pid" 2>/dev/null || true
    wait "$prebuild_pid" 2>/dev/null || true
  fi
}
trap stop_prebuild EXIT
if [[ $(id -u) == 0 || ${MINIKUBELET_E2E_CONTAINERD:-} == required ]]; then
  mkdir -p _output
  # Its own process group (setsid), so that stop_prebuild ends the go build under it too.
  setsid nice -n 10 hack/conformance/build.sh >_output/conformance-build.log 2>&1 &
  prebuild_pid=$!
fi

hack/containerd/install.sh || [[ ${MINIKUBELET_E2E_CONTAINERD:-} != required ]]
go test -p "$procs" -count=1 -timeout 60m "${pkgs[@]}"

if [[ -n $prebuild_pid ]]; then
  echo "test-e2e: waiting for the conformance binaries (_output/conformance-build.log)"
  if ! wait "$prebuild_pid"; then
    prebuild_pid=""
    echo "test-e2e: building the conformance binaries failed:" >&2
    tail -20 _output/conformance-build.log >&2
    exit 1
  fi
  prebuild_pid=""
fi

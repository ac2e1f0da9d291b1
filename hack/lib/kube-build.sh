# kube-build.sh: sourced by hack/cluster/build.sh and hack/conformance/build.sh, which build
# k8s.io/kubernetes v1.36.3 programs from the Go module proxy into a versioned cache.
#
#   kube_build_init DIR MODULE_DIR   cache = ~/.cache/minikubelet/DIR/v1.36.3, made and locked
#                                    (flock: one build at a time; others wait); builds run in
#                                    MODULE_DIR, the Go module with the staging replace lines
#   kube_build NAME PKG [test]       build PKG into $cache/NAME unless it is there (`go test -c`
#                                    with "test"), atomically: a half-built binary is never used
# shellcheck shell=bash

KUBE_VERSION=v1.36.3

kube_build_init() {
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/minikubelet/$1/${KUBE_VERSION}
  kube_build_module=$2
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  flock 9
  # The version ldflags of upstream's build (hack/lib/version.sh): `--version` prints v1.36.3, and
  # e2e.test compares it with the server's.
  local minor=${KUBE_VERSION#v1.} pkg
  minor=${minor%%.*}
  kube_build_ldflags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kube_build_ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    kube_build_ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
}

kube_build() {
  local name=$1 pkg=$2 how=(build)
  [[ ${3:-} != test ]] || how=(test -c)
  if [[ -x "$cache/$name" ]]; then return 0; fi
  echo "building $name ($pkg) into $cache (first time only)" >&2
  (cd "$kube_build_module" && CGO_ENABLED=0 go "${how[@]}" -trimpath -ldflags "-s -w ${kube_build_ldflags}" -o "$cache/$name.tmp" "$pkg")
  mv "$cache/$name.tmp" "$cache/$name"
}

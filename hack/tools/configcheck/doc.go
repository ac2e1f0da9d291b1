// Command configcheck checks the two config files of minikubelet's kind workflow where the tools
// that would check them cannot run (CI has no Docker engine, and limactl is not in the Go module
// proxy). hack/verify-vm.sh and hack/kind/test.sh run it.
//
//	configcheck vm [--go-version V] [--kind-version V] [--kubectl-version V] [--delve-version V]
//	               [--scripts-dir DIR] vm.yaml
//	configcheck kind kind-config.yaml
//
// vm parses the Lima file strictly into a struct that mirrors the Lima fields we use (an unknown or
// misspelt field is an error, as it is for limactl), then checks our rules for it (STYLE.md §15):
// images for both x86_64 and aarch64; every provision and probe script starts with "#!/bin/bash"
// and "set -eux"; downloads pick the architecture from `uname -m`; Go, kind, kubectl and Delve are
// pinned as NAME_VERSION=vX.Y.Z under a comment giving the reason, and Docker comes from the distro
// or a pinned version; nothing says "latest"; a probe runs `kind version` and has a hint. The
// --*-version flags cross-check the pins against the repo's own (.go-version, hack/tools/go.mod,
// hack/cluster/build.sh). --scripts-dir writes the scripts out for shellcheck.
//
// kind decodes a kind config as kind v0.33 does (kind.x-k8s.io/v1alpha4, yaml.v3 with known fields
// only, into kind's own types), then checks that a control-plane node exists, that node images are
// pinned by digest, and that a node-monitor-grace-period in a kubeadm patch is a Go duration.
//
// The checks are pure functions of the file's bytes (checkVM, checkKindConfig), table-tested in
// configcheck_test.go; main only reads files and prints.
package main

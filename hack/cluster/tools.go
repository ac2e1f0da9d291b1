//go:build tools

// Package tools pins the upstream binaries this module builds. `go build` of these import paths,
// from this module, uses the versions recorded in go.mod and go.sum.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubemark" // built only by `build.sh kubemark`, for make bench
)

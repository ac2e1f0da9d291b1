//go:build tools

// Package tools pins what this module builds: kubeadm and kube-proxy from k8s.io/kubernetes
// v1.36.3. `go build` of these import paths, from this module, uses the versions recorded in
// go.mod and go.sum. (CoreDNS is built by build.sh with `go install module@version`, from its
// own go.mod.)
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubeadm"
)

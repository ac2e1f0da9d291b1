// Package security holds the repository's static security checks: tests that read the source
// tree, need no cluster and run in seconds (`go test ./test/security`). They pin the "Never" list
// of STYLE.md that a reviewer could miss in a diff: no TLS verification switched off (Go's
// InsecureSkipVerify, client-go's Insecure / kubeconfig insecure-skip-tls-verify, the API server's
// --kubelet-insecure-tls style flags), and no private key written readable by others.
//
// The end-to-end half of the same issue, against a real control plane, is test/e2e/security.
package security

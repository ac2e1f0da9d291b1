// Package bootstrap gives the kubelet its identity: TLS bootstrap and client certificate rotation.
//
// Upstream counterparts: pkg/kubelet/certificate/bootstrap/bootstrap.go (LoadClientCert),
// k8s.io/client-go/util/certificate (the certificate manager and file store) and
// pkg/kubelet/certificate/transport.go (closing connections after a rotation).
//
// The flow, on start (LoadOrBootstrap):
//
//	--kubeconfig has a valid, unexpired client cert? ── yes ──▶ use it (a restart makes no CSR)
//	        │ no
//	        ▼
//	--bootstrap-kubeconfig (server, CA, token) ──▶ new ECDSA P-256 key
//	        ──▶ CSR: CN system:node:<name>, O system:nodes, signer kube-apiserver-client-kubelet,
//	            usages digital signature + client auth
//	        ──▶ kcm's csrapprover approves it (RBAC "nodeclient"), kcm's signer issues it
//	        ──▶ <cert-dir>/kubelet-client-<ts>.pem (cert+key, 0600, atomic)
//	            <cert-dir>/kubelet-client-current.pem → that file
//	        ──▶ --kubeconfig: server, CA from the bootstrap kubeconfig, cert/key = the symlink
//
// Then Rotator.Run loops: at 70–90% (jittered) of the certificate's lifetime it requests a new
// one with the node's current identity (approved by the "selfnodeclient" rule), swaps the
// symlink, and calls OnRotate: the kubelet's client transport (pkg/kubelet/transport.go) reloads the
// certificate it holds in memory, then closes open connections so they re-handshake with it.
//
// Invariants: TLS verification is never switched off (a bootstrap kubeconfig without a CA, or
// with insecure-skip-tls-verify, is refused); keys are written 0600 and atomically.
// With serverTLSBootstrap, ServingCert does the same for the kubelet API's serving certificate:
// a CSR to the kubernetes.io/kubelet-serving signer (subject system:node:<name>, the node's name
// and IP as SANs, usages digital signature + server auth), which nothing approves automatically —
// an admin runs kubectl certificate approve — stored as kubelet-server-<ts>.pem with a
// kubelet-server-current.pem link, served through tls.Config.GetCertificate, rotated at 70–90%.
//
// Simplified: the private key is not kept across a CSR that is
// still pending when the kubelet restarts (a restart simply makes a new CSR).
package bootstrap

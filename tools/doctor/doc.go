// Package doctor checks a node's setup before minikubelet runs on it, and says how to fix what is
// wrong: `minikubelet doctor <the flags of minikubelet>`. It prints one line per check:
//
//	[OK]   bootstrap kubeconfig _output/cluster/bootstrap.kubeconfig: API server https://127.0.0.1:6443 reachable, CA verifies
//	[FAIL] bootstrap token abcdef.<secret> in … rejected by the API server (401 Unauthorized): …
//	       fix: create a new bootstrap token …
//	[WARN] version skew: kubelet v1.36.3, kube-apiserver v1.40.0: the kubelet is 4 minor versions older; …
//	[SKIP] RBAC: create certificatesigningrequests: not checked: needs an accepted bootstrap token (see above)
//
// and a summary line; the command exits 1 if any check failed.
//
// # Role and upstream counterparts
//
// The kubelet has no doctor: it finds these problems one at a time, by failing as it starts. The
// closest upstream code is kubeadm's preflight checks (cmd/kubeadm/app/preflight/checks.go:
// PortOpenCheck listens and closes, DirAvailableCheck, KubeletVersionCheck), which a `kubeadm
// join` runs before it starts the kubelet. Each check here asks the same question the kubelet's
// own start-up code will ask, in the same way:
//
//  1. Kubeconfigs (pkg/bootstrap, upstream pkg/kubelet/certificate/bootstrap): --bootstrap-kubeconfig,
//     and --kubeconfig once TLS bootstrap has written it, load; a TLS handshake with the API server,
//     trusting only the kubeconfig's CA, succeeds. The failure says which: "unknown authority"
//     (wrong CA), "connection refused" (cluster not running), a name or validity mismatch, a timeout.
//     TLS verification is never switched off, and a kubeconfig that switches it off is refused.
//  2. Bootstrap token: a SelfSubjectReview (authentication.k8s.io/v1, which any authenticated
//     user may create) says who the token is; a 401 means wrong, expired or deleted; a bootstrap
//     token is system:bootstrap:<id> in group system:bootstrappers.
//  3. CSR RBAC: SelfSubjectAccessReviews as the bootstrap token for create certificatesigningrequests
//     and create certificatesigningrequests/nodeclient — the subresource kube-controller-manager's
//     CSR approver (pkg/controller/certificates/approver/sarapprove.go) checks before approving a
//     node's first certificate — and, as the node, certificatesigningrequests/selfnodeclient (the
//     renewals of certificate rotation). A denial names kubeadm's ClusterRoleBinding and the
//     kubectl command that creates it.
//  4. Version skew: the kubelet release minikubelet mirrors (pkg/version: the k8s.io module
//     versions it is built with) against the API server's /version. A kubelet newer than
//     kube-apiserver fails; one more than 3 minor versions older is a warning
//     (https://kubernetes.io/releases/version-skew-policy/).
//  5. Runtime: --container-runtime-endpoint answers CRI Version through pkg/cri/remote, as the
//     kubelet's first CRI call; without it, the built-in fake runtime's socket path is usable.
//  6. --cert-dir and --root-dir are writable (or can be created): a file is created and removed.
//  7. The kubelet API's --address:--port is free: listened on and closed at once. (minikubelet
//     serves /healthz on that port; it has no separate healthz port, so there is none to check.)
//
// # Shape
//
// Run is the whole doctor, readable top to bottom in the order above. Each check is a small
// function that returns a Result (status, one-line message, fix), so it can be tested alone; the
// decisions that need no I/O (versionSkew, softenIf, Summarize, Result.String) are pure.
// Checks that need the cluster take what earlier checks found (a reached API server, the token's
// identity); when that is missing they report SKIP instead of repeating the same failure.
//
// Invariants: doctor changes nothing — no object on the cluster, no file left on disk, no
// listener kept open; it never prints a token's secret; each network check is bounded by
// Config.Timeout (5 s). While --kubeconfig holds a working client certificate the bootstrap
// credentials are not used by minikubelet, so their failures are reported as warnings.
package doctor

// Package security holds the end-to-end security tests of a node against the real local control
// plane (its TestMain starts one, as every e2e package does). Each pins a property a real kubelet
// has and a course fork can lose without any other test noticing:
//
//   - files: the credentials TLS bootstrap and the kubelet API write — the client certificate and
//     key, the serving key kubelet.key, the kubeconfig — are readable by the owner only (0600) in
//     a private cert dir (0700), as upstream's certificate file store writes them;
//   - NodeRestriction: with the kubeconfig TLS bootstrap wrote, the node is system:node:<name> and
//     the Node authorizer and the NodeRestriction admission plugin confine it to its own Node,
//     its own Lease and the Secrets its pods use (403 for the rest);
//   - logs: even at -v=10, through TLS bootstrap and a pod with a Secret volume and a Secret env
//     var, the kubelet's log holds no bootstrap token, no Secret value and no private key.
//
// The static half (no cluster: TLS verification never switched off, keys never written
// world-readable) is test/security. Upstream counterparts: test/e2e/auth/node_authz.go and
// node_authn.go in k8s.io/kubernetes.
package security

// Package token is the kubelet's service account token manager: it asks the API server for
// short-lived tokens bound to a pod (the TokenRequest API), keeps them while they are fresh and
// asks again before they expire. The volume projector writes them into the pod's
// kube-api-access-* volume (pkg/volume, the serviceAccountToken source of a projected volume).
//
// Upstream counterpart (k8s.io/kubernetes v1.36): pkg/kubelet/token/token_manager.go, used by
// pkg/volume/projected/projected.go (collectData asks for the token, TearDown forgets it).
//
// # What a token is bound to
//
// The pod's projected volume names a path, an audience and expirationSeconds. The projector
// turns that into a TokenRequest bound to the pod (BoundObjectRef: v1 Pod, name, UID) and calls
// GetServiceAccountToken(ctx, namespace, serviceAccount, request). The API server signs a JWT
// whose claims name the service account and the pod; it stops being valid when the pod is
// deleted, even before it expires. The node authorizer lets a node create tokens only for the
// service accounts of pods bound to it, and NodeRestriction only for tokens bound to such a pod.
//
// # The loop: there is none of our own
//
//	pod sync (every syncFrequency and on every event) → WaitForAttachAndMount asks for a remount
//	  → the volume manager's reconciler → Projector.SetUpVolume
//	  → GetServiceAccountToken: cached and fresh? → the cached token
//	                            otherwise        → POST serviceaccounts/<sa>/token → cache it
//	  → atomic writer: the bytes changed? → a new ..data directory, the token file swapped
//	housekeeping (every 2 s) → CleanupPods(keep): forget tokens of pods that are gone, and
//	                           every expired token
//
// # When a token is refreshed (requiresRefresh, pure)
//
// A token was issued at iat = expirationTimestamp − expirationSeconds. It is requested again
// once it is older than 80 % of its TTL, or older than 24 h, whichever comes first:
//
//	iat ──────────── 80 % ───── exp          e.g. 3607 s → refreshed after 2885.6 s (~48 min)
//	                 ▲ refresh from here on       600 s → after 480 s
//
// If the refresh fails, the cached token is used while it is still valid (the error is logged);
// once it has expired, the error is returned and the volume keeps its last token.
//
// # Invariants
//
//   - No token reaches a log or an error: the manager logs the service account, the pod and the
//     expiry, never Status.Token (internal/logsafe keeps client-go's response bodies out, too).
//   - The cache key is (namespace, service account, audiences, expirationSeconds, bound pod name
//     and UID): the same pod asking for a different audience or lifetime gets its own token.
//   - The API call is made without holding the lock; pod workers of different pods never wait
//     for each other.
//
// # Simplified
//
//   - No jitter on the refresh time (upstream subtracts up to 10 s at random so that many pods
//     do not refresh at once): the refresh rule stays a pure function of the token and now.
//   - No garbage-collection goroutine: housekeeping calls CleanupPods, which also drops expired
//     entries (upstream: a one-minute wait.Forever).
//   - No discovery check for a missing TokenRequest API (every supported API server has it), and
//     the service account's UID is not part of the key (upstream uses it as a precondition).
package token

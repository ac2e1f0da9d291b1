// Package podsource tells the kubelet which pods it should run. It watches two sources — the
// kube-apiserver (pods bound to this node) and a directory of static pod manifests — and merges
// them into one channel of incremental PodUpdates (ADD, UPDATE, DELETE, REMOVE, RECONCILE) that
// the kubelet's syncLoop reads as its configCh.
//
// Upstream counterpart (k8s.io/kubernetes v1.36):
//   - pkg/kubelet/config/config.go     — PodConfig, podStorage.merge, checkAndUpdatePod → merge.go
//   - pkg/kubelet/config/apiserver.go  — Reflector on pods with spec.nodeName=<node> → apiserver.go
//   - pkg/kubelet/config/file.go, file_linux.go — manifest dir, periodic list + inotify → file.go
//   - pkg/kubelet/config/common.go     — applyDefaults, tryDecodeSinglePod → manifest.go
//   - pkg/kubelet/types/pod_update.go  — PodUpdate, PodOperation, annotation keys → types.go
//     (IsStaticPod and the config.source key are pkg/container's, static.go; types.go re-exports
//     the key)
//
// The picture:
//
//	kube-apiserver ──list+watch pods (spec.nodeName=me)──▶ apiserver source ─┐ full SET of pods
//	                                                       (Reflector +      │ on every change
//	                                                        UndeltaStore)    ▼
//	                                                                    ┌─────────┐  diffPods(old, new)
//	manifest dir ──every 20 s (clock ticker) + fsnotify──▶ file source ─▶│ merger  │──────────────────▶ Updates()
//	  *.yaml *.yml *.json     decode, default, validate   full SET ──▶  │ per-    │ REMOVE, ADD, UPDATE,  (chan, 50)
//	  (bad ones: one Warning event per file content, skipped)            │ source  │ DELETE, RECONCILE
//	                                                                    │ pod map │
//	                                                                    └─────────┘
//
// Every source always delivers its FULL current set ("SET" semantics); only the merger knows
// what changed. The merger keeps, per source, the pods it last saw by UID and turns each new set
// into at most one PodUpdate per operation, in upstream's order: REMOVE, ADD, UPDATE, DELETE,
// RECONCILE. The first set of a source with nothing to add still sends an empty ADD, so the
// kubelet learns that the source is ready (AllSourcesReady).
//
// Invariants:
//   - Updates for one source are sent in the order the sets arrived (one lock around merge+send).
//   - Pods on the channel are deep copies: the receiver may keep and modify them.
//   - The merger stamps kubernetes.io/config.source on every pod and kubernetes.io/config.seen at
//     first sight only; these "local" annotations never make a pod look changed.
//   - A static pod's UID is a hash of its file's content, node name and path: stable across
//     re-reads, new when the file changes (so an edit is REMOVE old + ADD new, as upstream).
//
// Simplified from upstream: no HTTP manifest source, no single-file manifest path (ManifestDir is
// a directory), no PodList manifests, a small hand-written validation in place of the API
// server's, the pod's scheme defaults are only those the kubelet needs, and no wait for the Node
// informer to sync before the apiserver watch starts.
package podsource

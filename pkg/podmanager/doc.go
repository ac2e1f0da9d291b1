// Package podmanager is the kubelet's memory of the pods it should run — the desired state the
// sync loop works towards — and of the mirror pods that stand for its static pods in the API.
//
// Upstream counterpart (k8s.io/kubernetes v1.36):
//   - pkg/kubelet/pod/pod_manager.go   — basicManager: pods by UID and full name, mirror maps → manager.go
//   - pkg/kubelet/pod/mirror_client.go — basicMirrorClient: create/delete mirror pods → mirror_client.go
//
// Static and mirror pods:
//
//	/etc/kubernetes/manifests/etcd.yaml ──file source──▶ static pod   default/etcd-node1  uid=<hash>
//	                                                        │   config.source=file, config.hash=<hash>
//	                                       kubelet: CreateMirrorPod (owner: the Node)
//	                                                        ▼
//	kube-apiserver ◀── mirror pod default/etcd-node1 uid=<api uid>, config.mirror=<hash>
//	        └──apiserver source──▶ arrives as an ordinary pod; AddPod files it under mirrors
//
// A static pod and its mirror share namespace and name, never the UID. The kubelet runs the static
// pod; the mirror only makes it visible (kubectl get pods) and carries its status. When the static
// pod changes (new hash), the mirror no longer matches (MirrorPodMatches) and the kubelet deletes
// and recreates it; when the static pod is gone, the mirror is an orphan (GetOrphanedMirrorPods)
// and the kubelet's housekeeping (pkg/kubelet/housekeeping.go) deletes it with its UID as a
// precondition; upstream's HandlePodCleanups takes the orphans' full names from
// GetPodsAndMirrorPods and deletes by name.
//
// The Manager has no loop: the kubelet's syncLoop handlers (pkg/kubelet/pod_handlers.go) call
// AddPod/UpdatePod/RemovePod for each PodUpdate from podsource. New starts empty (SetPods(nil), as
// upstream's NewBasicPodManager).
//
// Invariants:
//   - A pod with the kubernetes.io/config.mirror annotation is only in the mirror maps; every
//     other pod (regular or static) only in the pod maps.
//   - Each map pair (by UID, by namespace/name) holds the same pods.
//   - All methods are safe for concurrent use. Returned pods are shared: callers must not modify
//     them (DeepCopy first).
//
// Simplified from upstream: no UID translation maps (mirror UID → static UID) and no metrics;
// a pod removed by name only leaves the name map if the UID matches (upstream removes by name).
package podmanager

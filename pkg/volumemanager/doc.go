// Package volumemanager is the kubelet's volume manager: it sets up the volumes of the pods that
// should run, before their containers start, and tears them down once the containers are gone.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//   - pkg/kubelet/volumemanager/volume_manager.go: the Manager, Run, WaitForAttachAndMount,
//     GetMountedVolumesForPod (volume_manager.go);
//   - pkg/kubelet/volumemanager/cache/desired_state_of_world.go (desired_state_of_world.go) and
//     cache/actual_state_of_world.go (actual_state_of_world.go);
//   - pkg/kubelet/volumemanager/populator/desired_state_of_world_populator.go: findAndAddNewPods,
//     createVolumeSpec, getPVCExtractPV, getPVSpec, findAndRemoveDeletedPods (populator.go);
//   - pkg/kubelet/volumemanager/reconciler/reconciler.go with the operation executor's
//     nestedpendingoperations and exponential back-off, and operation_generator.go's
//     checkNodeAffinity and error messages (reconciler.go);
//   - the VolumePluginMgr and the secret, configmap, projected, downwardapi, empty_dir,
//     hostpath and local plugins (plugins.go; the writers themselves live in pkg/volume), with
//     each plugin's MetricsProvider as MetricsSource (du, statfs or none, for pkg/stats), and
//     the csi plugin (csi.go, over pkg/csi);
//   - pkg/kubelet/kubelet_volumes.go cleanupOrphanedPodDirs (CleanupOrphanedPodDirs);
//   - pkg/kubelet/kubelet.go SyncPod, which calls WaitForAttachAndMount and records "Unable to
//     attach or mount volumes: …" (pkg/kubelet/pod_sync.go).
//
// # Two worlds and two loops
//
//	pod manager ──▶ populator (every 100 ms) ──▶ desired state of world: pod → volumes
//	                  a claim → its bound PV            │
//	                  errors kept per pod ──┐           ▼
//	                                        │   reconciler (every 100 ms): for each volume that differs
//	SyncPod ──▶ WaitForAttachAndMount ◀─────┤     in ASW, not in DSW ──▶ plugin.tearDown ──▶ forget
//	            (poll 300 ms, ≤ 2 min 3 s)  │     in DSW, not in ASW ──▶ plugin.setUp ──▶ mark mounted
//	                                        │     (or remount required)
//	                                        └── actual state of world: pod → set-up volumes ──▶ mounts
//
// One turn of the populator (populateOnce): each pod of the pod manager whose worker is not
// stopping it and that is not processed yet gets its volumes resolved — a persistentVolumeClaim
// or a generic ephemeral volume (the claim <pod>-<volume>, which must be controlled by the pod)
// to its bound PersistentVolume — and matched with a plugin; a volume that fails (claim not
// bound, no plugin) is the pod's error and the pod is tried again next turn. A processed pod
// only gets its latest object (labels and annotations for the downward API). A pod whose
// containers can no longer run leaves the desired state.
//
// One turn of the reconciler (reconcileOnce): tear down what is set up and no longer desired,
// then set up what is desired and not set up, or marked for remount. Each is an operation in its
// own goroutine, one at a time per volume; a failure is a FailedMount Event ("MountVolume.SetUp
// failed for volume …", "MountVolume.NodeAffinity check failed for volume …") and delays the
// volume's next try by upstream's back-off (0.5 s, doubling up to 2 min 2 s).
//
// WaitForAttachAndMount asks for a remount of the pod's volumes that follow API objects (a
// changed Secret, ConfigMap, label or refreshed token reaches the files a moment after each pod
// sync), then waits until every volume a container mounts is set up. It returns the populator's
// errors at once, and SyncPod turns them into upstream's Event:
//
//	Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[],
//	failed to process volumes=[data]: error processing PVC default/data-web-0: PVC is not bound
//
// # Invariants
//
//   - Only operations write the actual state; only the populator writes the desired state.
//   - No two operations for one volume of one pod run at once.
//   - A pod's volumes stay while any of its containers may run; its directory goes at
//     housekeeping only when nothing of it is desired or set up.
//
// # Simplified
//
// No attach/detach (no plugin attaches: "unattached volumes" is always empty), no reconstruction
// after a restart (the reconciler sets every volume up again, which rewrites nothing that is
// current), no block volumes, no SELinux relabel, no volume GID annotation, no network volume type
// other than CSI (csi.go hands csi PVs and inline csi volumes to pkg/csi): such a volume is refused with upstream's "no volume plugin matched" and
// the note that minikubelet does not support it (docs/features.md lists what it does). A
// hostPath or local PersistentVolume is the node's path, which the runtime bind-mounts (a real
// directory on the fake runtime) — no mount of our own.
package volumemanager

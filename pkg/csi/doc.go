// Package csi is the kubelet's side of CSI: it registers the node plugins of CSI drivers that
// announce themselves in <root-dir>/plugins_registry, tells the API what they say of this node,
// and sets up and tears down the pods' CSI volumes through the drivers' Node services.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//   - pkg/kubelet/pluginmanager (plugin_manager.go, pluginwatcher/plugin_watcher.go,
//     operationexecutor/operation_generator.go GenerateRegisterPluginFunc) with the registration
//     API k8s.io/kubelet/pkg/apis/pluginregistration/v1 (pluginwatcher.go);
//   - pkg/volume/csi/csi_plugin.go RegistrationHandler (pluginwatcher.go: register, deregister)
//     and supportsVolumeLifecycleMode (volume.go: checkMode);
//   - pkg/volume/csi/nodeinfomanager/nodeinfomanager.go (nodeinfomanager.go);
//   - pkg/volume/csi/csi_client.go (client.go);
//   - pkg/volume/csi/csi_attacher.go MountDevice/UnmountDevice and waitForVolumeAttachment, and
//     csi_mounter.go SetUpAt/TearDownAt/podAttributes (volume.go, mount.go).
//
// # Registration
//
//	driver's registrar ──▶ <root>/plugins_registry/<name>-reg.sock
//	watchOnce (every 1 s) ──▶ GetInfo ──▶ type CSIPlugin, a name, a 1.x version?
//	    ──▶ NodeGetInfo on the driver's endpoint ──▶ Node: annotation csi.volume.kubernetes.io/nodeid
//	        {driver: nodeID} and topology labels; CSINode <node>: drivers[] {name, nodeID,
//	        topologyKeys, allocatable.count}
//	    ──▶ NotifyRegistrationStatus(registered, error)
//	socket gone ──▶ driver forgotten, removed from the annotation and the CSINode
//
// # Volumes
//
// SetUp: the driver must be registered ("driver name X not found in the list of registered CSI
// drivers"); its CSIDriver object (or upstream's defaults when there is none: attachRequired,
// Persistent only, no pod info) decides the rest. A volume's lifecycle mode must be one the
// driver lists (an inline `volumes[].csi` is Ephemeral, a PV's Persistent); a Persistent volume
// of a driver with attachRequired needs its VolumeAttachment attached (minikubelet has no
// attach/detach controller: one look, an error until something else attaches it). Then
// NodeStageVolume at <root>/plugins/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount,
// once per node and only when the driver has STAGE_UNSTAGE_VOLUME, and NodePublishVolume at
// <root>/pods/<uid>/volumes/kubernetes.io~csi/<volume>/mount, whose path the runtime
// bind-mounts. With podInfoOnMount the volume context gets csi.storage.k8s.io/pod.name,
// pod.namespace, pod.uid, serviceAccount.name (and ephemeral "true" inline).
//
// TearDown: NodeUnpublishVolume, then NodeUnstageVolume when the last target published from
// the staging path is gone.
//
// # Simplified
//
// The registry directory is listed every second instead of watched with fsnotify; a failed
// registration is tried again after a minute. Only CSI plugins register (device plugins do not
// go through this watcher). No secrets are passed to drivers: a volume with a secret reference
// is refused. No reconstruction: after a restart the staged volumes are not known, so the first
// teardown does not unstage. No block volumes, no fsGroup, SELinux or token requests, no volume
// limits beyond reporting allocatable.count.
//
// # Invariants
//
//   - A driver is used only while its registration socket exists.
//   - A volume is unstaged only after every target published from it is unpublished.
//   - Teardown never removes a directory with content (it may still be the volume's data).
package csi

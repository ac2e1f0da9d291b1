// Package nodestatus registers the Node and keeps its status true: capacity, addresses, node
// info, conditions, and the kubelet's port.
//
// Upstream counterparts: pkg/kubelet/kubelet_node_status.go (registerWithAPIServer,
// updateNodeStatus, nodeStatusHasChanged) and pkg/kubelet/nodestatus/setters.go.
//
// The loop (Run) is one turn of syncOnce every nodeStatusUpdateFrequency (10 s), beside an
// informer on our own Node (watch.go; upstream's nodeInformer, metadata.name=<node>):
//
//	the Node from the watch cache — or a GET when the last turn failed, the
//	informer has not synced or no watch is open (readNode), inputs (machine,
//	addresses, readiness checks, runtime version, pressure, now)           ← I/O
//	computeStatus(old status, inputs) → computed status                    ← pure
//	needsReport(old, computed, lastReport, now, 5 min)?                    ← pure
//	   no  → nothing is sent (the Lease is the heartbeat, KEP-589)
//	   yes → PATCH nodes/<name>/status (strategic merge patch) and record
//	         NodeHasInsufficientMemory/NodeHasSufficientMemory/…/NodeReady/NodeNotReady
//	         for condition changes
//
// Capacity and allocatable are computed once, by NodeResources (allocatable.go, upstream
// setters.go MachineInfo): the machine's capacity with the --node-capacity overrides and pods =
// maxPods; allocatable = capacity − kubeReserved − systemReserved − the memory.available and
// nodefs.available hard eviction thresholds (pkg/cm), never below 0. A reservation above the
// capacity stops the kubelet. The kubelet's admission uses the same allocatable.
//
// An idle node therefore sends nothing here between reports: its requests are its Lease's. The
// watch is trusted only while open, because after an API server outage the reflector may wait up
// to 30 s before it watches again, and kube-controller-manager may have marked the node Unknown
// meanwhile: those turns GET, and put Ready back at once (test/e2e/faults TestAPIServerOutage).
//
// Invariants: lastTransitionTime moves only when a condition's status changes; lastHeartbeatTime
// is when the status was computed; Ready=False carries the failed checks in its message. The
// readiness checks are pluggable (AddReadinessCheck): the runtime and PLEG add theirs. The
// MemoryPressure, DiskPressure and PIDPressure conditions are the eviction manager's
// (SetPressure, pkg/eviction), with upstream's reasons and messages (KubeletHasInsufficientMemory,
// "kubelet has insufficient memory available", …); the kube-controller-manager turns them into
// the node.kubernetes.io/*-pressure taints. Simplified: no image list, volumes or extended
// resources.
package nodestatus

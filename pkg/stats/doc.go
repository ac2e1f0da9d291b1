// Package stats answers "how much does this node and each of its pods use?": the Summary of
// /stats/summary, the Prometheus samples of /metrics/resource that metrics-server (and so
// `kubectl top`) scrapes, and the signals the eviction manager reads.
//
// Upstream counterparts (k8s.io/kubernetes v1.36):
//
//	pkg/kubelet/stats/provider.go, cri_stats_provider.go    Provider; pods and containers from CRI
//	                                                         (listPodStatsStrictlyFromCRI, makeContainerStats,
//	                                                         removeTerminatedPods/Containers)
//	pkg/kubelet/stats/cri_stats_provider_linux.go           pod CPU, memory, processes, network from sandbox stats
//	pkg/kubelet/server/stats/summary.go, handler.go         the Summary (Get, GetCPUAndMemoryStats); the
//	                                                         /stats/summary handler lives in pkg/server
//	pkg/kubelet/metrics/collectors/resource_metrics.go      /metrics/resource (metrics.go)
//	k8s.io/kubelet/pkg/apis/stats/v1alpha1                  the Summary types, used as they are
//
// One Summary, file by file:
//
//	provider.go  Summary(ctx): reuse the last one if younger than CacheTTL (1 s), else one round of
//	             CRI calls: ListPodSandbox, ListContainers, ListContainerStats, ListPodSandboxStats
//	             (if it fails — Unimplemented, or containerd 1.6's "failed to decode sandbox container
//	             metrics" while any sandbox is not ready — pods are the sums of their containers,
//	             upstream's fallback, logged once), ImageFsInfo
//	pods.go      podStatsFromCRI (pure): keep the pods the kubelet knows (by the sandbox's metadata
//	             uid), the READY (else newest) sandbox of each, its RUNNING containers (newest per
//	             name); a container's usageNanoCores is the runtime's or the rate since the last round
//	storage.go   each container's log directory size (Logs) and the pod's EphemeralStorage =
//	             writable layers + logs
//	node.go      the fake node (Config.FakeCapacity set: the built-in runtime). Nothing runs, so its
//	             figures are made up: memory working set = the pods' + 64 MiB, available = the
//	             reported memory capacity − working set (upstream's memory.available); CPU = the
//	             pods' rate + 20m, its time the integral of that rate; nodefs capacity = the
//	             ephemeral-storage capacity, used = the pods' ephemeral storage + 64 MiB, one inode
//	             per 16 KiB; imagefs the runtime's ImageFsInfo on the same capacity; processes =
//	             50 + the pods' process counts, MaxPID the machine's pid_max
//	machine.go   a real runtime's node (containerd): the machine's figures from /proc/meminfo,
//	             /proc/stat, statfs of --root-dir and of the image filesystem, pid_max and sysinfo
//	             — upstream reads the same from the root cgroup through cadvisor
//	metrics.go   ResourceMetrics: node, pod and container CPU time and working set, container
//	             start times and resource_scrape_error, each sample stamped with its figure's time
//	volumes.go   VolumeStats (upstream fs_resource_analyzer.go, volume_stat_calculator.go,
//	             pkg/volume/metrics_du.go, metrics_statfs.go): its own loop, every
//	             volumeStatsAggPeriod (1 min), walks each pod's set-up emptyDir, secret, configMap,
//	             projected and downwardAPI volumes as du does (blocks, inodes, a hard link once) and
//	             statfs's a local PV; the Summary takes the last figures (pods[].volume[], with
//	             pvcRef for claims) and adds the local ephemeral volumes to the pod's ephemeral
//	             storage; the eviction manager's emptyDir sizeLimit check reads them
//	volume_metrics.go  kubelet_volume_stats_* per claim, from the last figures (no walk, no CRI call)
//
// What it simplifies: no cadvisor (pod and container figures come only from CRI, as upstream's
// PodAndContainerStatsFromCRI gate does); no CSI volume stats (NodeGetVolumeStats), one loop for
// every pod's volumes (upstream: a goroutine per pod, with jitter); no system containers (kubelet, runtime,
// pods), swap, PSI or accelerators; the node's memory figures come from /proc/meminfo rather than
// the root cgroup; container root filesystems and logs share nodefs' capacity (no separate
// imagefs/containerfs split). Summaries are shared: callers must not modify them.
package stats

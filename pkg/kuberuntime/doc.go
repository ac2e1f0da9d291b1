// Package kuberuntime turns a pod spec into CRI calls: it is the only package that knows what a
// sandbox, a container instance and an image are. The kubelet's pod workers call SyncPod and
// KillPod; PLEG and housekeeping call GetPods and GetPodStatus.
//
// Upstream counterpart: pkg/kubelet/kuberuntime (v1.36). Our files, and the upstream file each
// mirrors:
//
//   - manager.go: Config, New, SyncPod (one method per step: killForSync, sandboxForSync,
//     startForSync), KillPod, RemovePod (kuberuntime_manager.go);
//   - actions.go: computePodActions (one function per step: newSandboxActions,
//     computeContainerActions, killContainersNotInSpec), computeInitContainerActions (initWalk)
//     (kuberuntime_manager.go computePodActions; kuberuntime_container.go
//     computeInitContainerActions). Whether a container runs again is pkg/container's
//     ShouldContainerBeRestarted (pkg/kubelet/container/helpers.go), which the pod phase and the
//     prober read too;
//   - termination_order.go: sidecars stop after the app, in reverse order
//     (kuberuntime_termination_order.go);
//   - lifecycle.go: postStart and preStop hooks (exec, httpGet, sleep), killContainer
//     (pkg/kubelet/lifecycle/handlers.go; kuberuntime_container.go killContainer,
//     executePreStopHook);
//   - termination_message.go: the termination-log file and state.terminated.message
//     (kuberuntime_container.go getTerminationMessage, readLastStringFromContainerLogs);
//   - events.go: the pod Events (kuberuntime_container.go recordContainerEvent);
//   - container.go: startContainer with its crash-loop back-off, stopContainer
//     (kuberuntime_container.go startContainer, killContainer);
//   - image.go: ensureImage (kuberuntime_image.go; pkg/kubelet/images/image_manager.go);
//   - config.go: the CRI sandbox and container configs, the pod's hostname, createSandbox
//     (kuberuntime_sandbox.go; kuberuntime_container.go generateContainerConfig;
//     pkg/kubelet/kubelet_pods.go GeneratePodHostNameAndDomain);
//   - resources.go: a container's requests and limits in CRI terms (cpu shares, CFS quota,
//     memory limit, oom_score_adj by QoS class; memory.oom.group on cgroup v2) and the
//     sandbox's cgroup parent /kubepods[/burstable|/besteffort]/pod<uid>
//     (kuberuntime_container_linux.go generateLinuxContainerResources,
//     calculateLinuxResources; kuberuntime_sandbox.go; pkg/cm and pkg/qos do the arithmetic);
//   - security_context.go: the pod's and containers' securityContext in CRI terms, sysctls,
//     seccomp and AppArmor profiles, the runAsNonRoot check (security_context.go,
//     security_context_others.go, helpers.go, kuberuntime_sandbox.go
//     generatePodSandboxLinuxConfig; pkg/securitycontext/util.go);
//   - status.go: GetPods, GetPodStatus (kuberuntime_manager.go GetPods, GetPodStatus);
//   - labels.go: labels, annotations, the container hash, log paths (labels.go, helpers.go);
//   - gc.go: pruneDeadContainers (kuberuntime_gc.go);
//   - sync_result.go: SyncResult, ContainerError, the waiting reasons
//     (pkg/kubelet/container/sync_result.go);
//   - instrumented.go: noteCRI, the journal of CRI calls (instrumented_services.go).
//
// One SyncPod is:
//
//	computePodActions(pod, runtime status, probe results)   ← pure, table-tested
//	  new sandbox? (none, died, >1 ready, network mode changed, no IP) → only the first init
//	    container (or, without init containers, every container)
//	  ephemeral containers (kubectl debug) the runtime never had: started once, even while the
//	    pod initializes, never restarted
//	  init containers, last first: the next one to run; a failed one again (unless it will not
//	    restart: kill the pod); sidecars (restartPolicy: Always) in order, the next waiting for
//	    the previous one's startup probe, restarted when they exit
//	  once initialized: containers to start (never ran, or exited and ShouldContainerBeRestarted
//	    says so: a matching restart rule, the container's restartPolicy, the pod's)
//	  containers to kill (spec hash changed, liveness or startup probe failed, not in spec);
//	    nothing left to run → kill the pod (sidecars do not keep it alive)
//	KillPod / stop containers → RunPodSandbox → ephemeral containers → init containers to start, in order (a regular
//	  one that cannot start ends the sync) → for each container to start:
//	  crash-loop backoff (10 s doubling to 300 s) → image (imagePullPolicy, pull backoff)
//	  → CreateContainer (labels io.kubernetes.*, hash and restart count annotations,
//	    log <pod-logs-dir>/<ns>_<name>_<uid>/<container>/<restart>.log) → StartContainer
//
// Containers are mapped back to pods only through their labels, so a restarted kubelet adopts
// what is running. Stopping or removing what is already gone is success, as CRI says (containerd
// 1.6 answers NotFound for an ID it does not know; 1.7+ answers OK). A host-network sandbox gets
// no hostname: it shares the node's UTS namespace, where runc cannot set one.
// A container is stopped by killContainer: a Killing Event, its preStop hook (given at most the
// grace period, whose time is taken from it), its turn (sidecars after the app, in reverse order,
// upstream terminationOrdering), then StopContainer with what is left, at least 2 s. A postStart
// hook runs right after StartContainer; if it fails the container is killed
// (FailedPostStartHook) and waits as PostStartHookError. Every container gets its own
// termination-log file, mounted at terminationMessagePath; an exited container's message is what
// it wrote there (4 KiB), or with FallbackToLogsOnError the tail of its log.
//
// Simplified: no hugepage limits (upstream sets every page size to 0 unless limited), no swap
// settings (containerd 1.6 sets the swap limit to the memory limit itself), no MemoryQoS, no
// sandbox Resources/Overhead (containerd 1.6 does not read them); cpuCFSQuota is always on.
// In-place resize (resize.go, upstream computePodResizeAction / doPodResizeAction): a running
// regular container whose cpu shares, cpu quota or memory limit in the (allocated) pod differs
// from what the runtime reports in its ContainerStatus resources is updated with CRI
// UpdateContainerResources (resizePolicy NotRequired) or restarted, "Container X resize requires
// restart" (RestartContainer for a changed resource). The first failed update stops the others
// and is the SyncResult's ResizeError (the kubelet's PodResizeInProgress reason Error). Simplified: no pod-level resize, no resize
// of sidecars or init containers, no actuated-resources checkpoint (the runtime's report is
// trusted; a runtime that reports none is never resized), no check that a lower memory limit
// is above current usage, no ordering of cpu and memory updates. Container restart rules (KEP-5307) are implemented: a container's own
// restartPolicy overrides the pod's, and a restartPolicyRules entry whose exit codes match with
// action Restart restarts it even under the pod's restartPolicy Never. Not RestartAllContainers
// (KEP-5532): a matching rule restarts only its own container, and no AllContainersRestarting.
// Security context: no user namespaces (hostUsers: false), no Windows options, no setHostnameAsFQDN,
// no seccompDefault (unset seccomp is Unconfined, as upstream's default) and no Localhost
// seccomp profiles (we are not given <root-dir>/seccomp: such a container fails with
// CreateContainerConfigError); no extra supplemental groups from volumes; the kubelet's
// sysctl and AppArmor admission checks are not here (upstream pkg/kubelet/sysctl,
// pkg/kubelet/apparmor).
package kuberuntime

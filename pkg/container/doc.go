// Package container holds the types every kubelet part uses to talk about what the runtime has:
// PodStatus, ContainerStatus and RunningPod. kuberuntime produces them, PLEG caches and compares
// them, the kubelet turns them into the API's pod status.
//
// Besides the types, the decisions more than one part needs, each written once:
//
//   - helpers.go: is a container a sidecar (IsRestartableInitContainer), and does it run again
//     (ShouldContainerBeRestarted, ContainerShouldRestart with the container restart rules of
//     KEP-5307, RestartsWithoutExitCode, RunsOnce) — read by kuberuntime's computePodActions,
//     the kubelet's pod phase, the prober's workers, cm's and qos's arithmetic;
//   - static.go: is a pod static (IsStaticPod: its config.source is set and is not "api") — read
//     by the status manager (status goes to the mirror pod), podsource, qos (critical pods) and
//     the kubelet;
//   - expand.go: $(VAR) expansion; hostname.go: the pod's hostname and domain.
//
// Upstream counterparts: pkg/kubelet/container/runtime.go (kubecontainer.PodStatus, Pod, Status),
// pkg/kubelet/container/helpers.go (ShouldContainerBeRestarted), pkg/api/v1/pod/util.go
// (IsRestartableInitContainer, ContainerShouldRestart, FindMatchingContainerRestartRule),
// pkg/kubelet/types/pod_update.go (IsStaticPod, ConfigSourceAnnotationKey).
//
// Simplified: a matching RestartAllContainers rule (KEP-5532) restarts only its own container,
// as Restart does; the pod's other containers are not restarted with it.
package container

// Package container holds the types every kubelet part uses to talk about what the runtime has:
// PodStatus, ContainerStatus and RunningPod. kuberuntime produces them, PLEG caches and compares
// them, the kubelet turns them into the API's pod status. Types only, no behaviour beyond lookups.
// Upstream counterpart: pkg/kubelet/container/runtime.go (kubecontainer.PodStatus, Pod, Status).
package container

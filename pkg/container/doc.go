// Package container holds the types every kubelet part uses to talk about what the runtime has:
// PodStatus, ContainerStatus and RunningPod. kuberuntime produces them, PLEG caches and compares
// them, the kubelet turns them into the API's pod status. Besides the types, two pure helpers more than
// one part needs: $(VAR) expansion (expand.go) and the pod's hostname and domain (hostname.go).
// Upstream counterpart: pkg/kubelet/container/runtime.go (kubecontainer.PodStatus, Pod, Status).
package container

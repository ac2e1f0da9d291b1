package kuberuntime

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// GetPods lists the runtime's pods. With all=false only ready sandboxes and running containers.
func (m *Manager) GetPods(ctx context.Context, all bool) ([]*kubecontainer.RunningPod, error) {
	sandboxFilter := &runtimeapi.PodSandboxFilter{}
	containerFilter := &runtimeapi.ContainerFilter{}
	if !all {
		sandboxFilter.State = &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}
		containerFilter.State = &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	}
	sandboxes, err := m.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: sandboxFilter})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := m.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: containerFilter})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	pods := map[types.UID]*kubecontainer.RunningPod{}
	podFor := func(labels map[string]string) *kubecontainer.RunningPod {
		uid := types.UID(labels[LabelPodUID])
		if uid == "" {
			return nil // not created by a kubelet
		}
		p := pods[uid]
		if p == nil {
			p = &kubecontainer.RunningPod{ID: uid, Name: labels[LabelPodName], Namespace: labels[LabelPodNamespace]}
			pods[uid] = p
		}
		return p
	}
	for _, s := range sandboxes.GetItems() {
		if p := podFor(s.GetLabels()); p != nil {
			p.Sandboxes = append(p.Sandboxes, s)
		}
	}
	for _, c := range containers.GetContainers() {
		if p := podFor(c.GetLabels()); p != nil {
			p.Containers = append(p.Containers, c)
		}
	}
	out := make([]*kubecontainer.RunningPod, 0, len(pods))
	for _, p := range pods {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// GetPodStatus asks the runtime for everything it has of one pod.
func (m *Manager) GetPodStatus(ctx context.Context, uid types.UID, name, namespace string) (*kubecontainer.PodStatus, error) {
	byUID := map[string]string{LabelPodUID: string(uid)}
	sandboxes, err := m.runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: byUID}})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes of pod %s/%s: %w", namespace, name, err)
	}
	st := &kubecontainer.PodStatus{ID: uid, Name: name, Namespace: namespace}
	for _, s := range sandboxes.GetItems() {
		resp, err := m.runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: s.GetId()})
		if err != nil {
			return nil, fmt.Errorf("status of sandbox %s: %w", s.GetId(), err)
		}
		st.Sandboxes = append(st.Sandboxes, resp.GetStatus())
	}
	sort.SliceStable(st.Sandboxes, func(i, j int) bool {
		a, b := st.Sandboxes[i], st.Sandboxes[j]
		if a.GetCreatedAt() != b.GetCreatedAt() {
			return a.GetCreatedAt() > b.GetCreatedAt()
		}
		return a.GetMetadata().GetAttempt() > b.GetMetadata().GetAttempt()
	})
	for _, s := range st.Sandboxes {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			st.IPs = sandboxIPs(s)
			break
		}
	}

	containers, err := m.runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: byUID}})
	if err != nil {
		return nil, fmt.Errorf("list containers of pod %s/%s: %w", namespace, name, err)
	}
	for _, c := range containers.GetContainers() {
		resp, err := m.runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
		if err != nil {
			return nil, fmt.Errorf("status of container %s: %w", c.GetId(), err)
		}
		cs := toContainerStatus(resp.GetStatus())
		m.addTerminationMessage(ctx, cs, resp.GetStatus())
		st.Containers = append(st.Containers, cs)
	}
	// Newest first; instances created in the same instant are ordered by their restart count.
	sort.SliceStable(st.Containers, func(i, j int) bool {
		a, b := st.Containers[i], st.Containers[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.RestartCount > b.RestartCount
	})
	return st, nil
}

func sandboxIPs(s *runtimeapi.PodSandboxStatus) []string {
	var ips []string
	if ip := s.GetNetwork().GetIp(); ip != "" {
		ips = append(ips, ip)
	}
	for _, extra := range s.GetNetwork().GetAdditionalIps() {
		ips = append(ips, extra.GetIp())
	}
	return ips
}

func toContainerStatus(s *runtimeapi.ContainerStatus) *kubecontainer.ContainerStatus {
	hash, _ := strconv.ParseUint(s.GetAnnotations()[annotationContainerHash], 16, 64)
	restarts, _ := strconv.Atoi(s.GetAnnotations()[annotationRestartCount])
	return &kubecontainer.ContainerStatus{
		ID:           s.GetId(),
		Name:         s.GetMetadata().GetName(),
		State:        s.GetState(),
		CreatedAt:    nanos(s.GetCreatedAt()),
		StartedAt:    nanos(s.GetStartedAt()),
		FinishedAt:   nanos(s.GetFinishedAt()),
		ExitCode:     s.GetExitCode(),
		Reason:       s.GetReason(),
		Message:      s.GetMessage(),
		Image:        s.GetImage().GetImage(),
		ImageRef:     s.GetImageRef(),
		Hash:         hash,
		RestartCount: restarts,
		Resources:    s.GetResources().GetLinux(),
	}
}

func nanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

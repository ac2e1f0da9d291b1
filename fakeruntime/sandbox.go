package fakeruntime

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// sandbox is one pod sandbox: in a real runtime, the pause container that holds the pod's
// network namespace.
type sandbox struct {
	id        string
	seq       uint64                       // creation order
	config    *runtimeapi.PodSandboxConfig // as given, owned by us
	state     runtimeapi.PodSandboxState
	createdAt time.Time
	ip        netip.Addr // invalid for host-network sandboxes
	handler   string     // RuntimeHandler
}

// sandboxNameKey is what must be unique among live sandboxes.
func sandboxNameKey(m *runtimeapi.PodSandboxMetadata) string {
	return fmt.Sprintf("%s_%s_%s_%d", m.GetName(), m.GetNamespace(), m.GetUid(), m.GetAttempt())
}

func (s *sandbox) hostNetwork() bool {
	return s.config.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
}

// serveIP is where the sandbox's containers serve: its pod IP, or with the host's network the
// host's loopback address (the fake never listens beyond loopback).
func (s *sandbox) serveIP() netip.Addr {
	if s.hostNetwork() {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return s.ip
}

func (s *sandbox) toPodSandbox() *runtimeapi.PodSandbox {
	st := s.toStatus()
	return &runtimeapi.PodSandbox{Id: st.Id, Metadata: st.Metadata, State: st.State, CreatedAt: st.CreatedAt,
		Labels: st.Labels, Annotations: st.Annotations, RuntimeHandler: st.RuntimeHandler}
}

// toStatus is what PodSandboxStatus reports. It is built from our state and cloned once, so the
// caller may keep it.
func (s *sandbox) toStatus() *runtimeapi.PodSandboxStatus {
	options := s.config.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if options == nil {
		options = &runtimeapi.NamespaceOption{}
	}
	st := &runtimeapi.PodSandboxStatus{
		Id:             s.id,
		Metadata:       s.config.GetMetadata(),
		State:          s.state,
		CreatedAt:      s.createdAt.UnixNano(),
		Network:        &runtimeapi.PodSandboxNetworkStatus{},
		Labels:         s.config.GetLabels(),
		Annotations:    s.config.GetAnnotations(),
		RuntimeHandler: s.handler,
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: options}},
	}
	if s.ip.IsValid() {
		st.Network.Ip = s.ip.String()
	}
	return proto.Clone(st).(*runtimeapi.PodSandboxStatus)
}

// RunPodSandbox creates a READY sandbox with a fresh pod IP.
func (r *Runtime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	if err := validateSandboxMetadata(cfg.GetMetadata()); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := sandboxNameKey(cfg.GetMetadata())
	for _, s := range r.sandboxes {
		if sandboxNameKey(s.config.GetMetadata()) == key {
			return nil, status.Errorf(codes.AlreadyExists, "pod sandbox name %q is reserved for %q: remove that sandbox first", key, s.id)
		}
	}
	s := &sandbox{
		id:        newID(),
		seq:       r.nextSeqLocked(),
		config:    proto.Clone(cfg).(*runtimeapi.PodSandboxConfig),
		state:     runtimeapi.PodSandboxState_SANDBOX_READY,
		createdAt: r.clock.Now(),
		handler:   req.GetRuntimeHandler(),
	}
	if !s.hostNetwork() {
		ip, err := r.allocateIP(s.id)
		if err != nil {
			return nil, err
		}
		s.ip = ip
	}
	r.sandboxes[s.id] = s
	klog.FromContext(ctx).V(2).Info("Sandbox ready", "podSandboxID", s.id, "pod", klog.KRef(cfg.GetMetadata().GetNamespace(), cfg.GetMetadata().GetName()), "ip", s.ip)
	r.publishLocked(s.id, s, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	r.publishLocked(s.id, s, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: s.id}, nil
}

func validateSandboxMetadata(m *runtimeapi.PodSandboxMetadata) error {
	switch {
	case m == nil:
		return status.Error(codes.InvalidArgument, "pod sandbox config and its metadata are required")
	case m.GetName() == "":
		return status.Error(codes.InvalidArgument, "pod sandbox metadata.name is required")
	case m.GetNamespace() == "":
		return status.Error(codes.InvalidArgument, "pod sandbox metadata.namespace is required")
	case m.GetUid() == "":
		return status.Error(codes.InvalidArgument, "pod sandbox metadata.uid is required")
	}
	return nil
}

// allocateIP returns the first free address of the pod CIDR after the gateway (.1).
func (r *Runtime) allocateIP(sandboxID string) (netip.Addr, error) {
	ip := r.podCIDR.Addr().Next().Next() // skip the network address and the gateway
	for ; r.podCIDR.Contains(ip); ip = ip.Next() {
		if _, used := r.usedIPs[ip]; !used && r.podCIDR.Contains(ip.Next()) { // not broadcast
			r.usedIPs[ip] = sandboxID
			return ip, nil
		}
	}
	return netip.Addr{}, status.Errorf(codes.ResourceExhausted, "no free pod IP left in %s: remove some sandboxes", r.podCIDR)
}

// StopPodSandbox stops the sandbox's containers and marks it NOTREADY. Unknown IDs are fine.
func (r *Runtime) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.sandboxLocked(req.GetPodSandboxId())
	if status.Code(err) == codes.NotFound {
		return &runtimeapi.StopPodSandboxResponse{}, nil // an unknown sandbox is already stopped
	} else if err != nil {
		return nil, err
	}
	for _, c := range r.containers {
		if c.sandboxID == s.id && c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
			r.exitLocked(c, exitCodeSIGKILL, "Error", "pod sandbox stopped")
		}
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
		s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		klog.FromContext(ctx).V(2).Info("Sandbox stopped", "podSandboxID", s.id)
		r.publishLocked(s.id, s, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox forcibly removes the sandbox and all its containers. Unknown IDs are fine.
func (r *Runtime) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.sandboxLocked(req.GetPodSandboxId())
	if status.Code(err) == codes.NotFound {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	} else if err != nil {
		return nil, err
	}
	for _, c := range r.containers {
		if c.sandboxID == s.id {
			r.removeContainerLocked(c)
		}
	}
	if s.state == runtimeapi.PodSandboxState_SANDBOX_READY {
		s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		r.publishLocked(s.id, s, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
	delete(r.usedIPs, s.ip)
	delete(r.sandboxes, s.id)
	klog.FromContext(ctx).V(2).Info("Sandbox removed", "podSandboxID", s.id)
	r.publishLocked(s.id, s, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

// PodSandboxStatus reports one sandbox; with verbose, also its containers and an info map
// with the sandbox's config as the kubelet sent it (as containerd's "config": `crictl inspectp`
// shows the pod's cgroup parent there, linux.cgroup_parent).
func (r *Runtime) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.sandboxLocked(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.PodSandboxStatusResponse{Status: s.toStatus(), Timestamp: r.clock.Now().UnixNano()}
	if req.GetVerbose() {
		resp.ContainersStatuses = r.containerStatusesLocked(s.id)
		resp.Info = infoJSON("info", sandboxInfo{Runtime: RuntimeName, HostNetwork: s.hostNetwork(), Config: s.config})
	}
	return resp, nil
}

// sandboxInfo is the verbose PodSandboxStatus's "info".
type sandboxInfo struct {
	Runtime     string                       `json:"runtime"`
	HostNetwork bool                         `json:"hostNetwork"`
	Config      *runtimeapi.PodSandboxConfig `json:"config"`
}

// ListPodSandbox lists sandboxes that match the filter (ID prefix, state, labels).
func (r *Runtime) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := req.GetFilter()
	keep := func(s *sandbox) bool { return s.matches(f.GetId(), f.GetState(), f.GetLabelSelector()) }
	return &runtimeapi.ListPodSandboxResponse{Items: list(r.sandboxes, keep, (*sandbox).toPodSandbox)}, nil
}

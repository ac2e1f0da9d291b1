package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Exit codes of a process killed by a signal: 128 + signal number.
const (
	exitCodeSIGTERM int32 = 128 + 15
	exitCodeSIGKILL int32 = 128 + 9
)

// container is one container and its "process": a program of steps with a program counter
// (process.go runs it).
type container struct {
	id        string
	seq       uint64 // creation order
	sandboxID string
	config    *runtimeapi.ContainerConfig // as given, owned by us
	image     *image                      // resolved at create time
	logPath   string                      // resolved; "" discards output
	state     runtimeapi.ContainerState
	createdAt time.Time
	startedAt time.Time
	finished  time.Time
	exitCode  int32
	reason    string
	message   string
	resources *runtimeapi.ContainerResources

	program []step
	pc      int         // index of the next step to run
	timer   clock.Timer // pending sleep, nil if none

	// exited is made when the container starts and closed when its process exits: exec sessions
	// end then.
	exited chan struct{}
	// attached are the attach sessions that receive what the program writes from now on; each
	// channel is closed when the process exits.
	attached map[chan output]struct{}
}

func (c *container) nameKey() string { return containerNameKey(c.config.GetMetadata()) }

func containerNameKey(m *runtimeapi.ContainerMetadata) string {
	return fmt.Sprintf("%s_%d", m.GetName(), m.GetAttempt())
}

func (c *container) toContainer() *runtimeapi.Container {
	return &runtimeapi.Container{
		Id:           c.id,
		PodSandboxId: c.sandboxID,
		Metadata:     proto.Clone(c.config.GetMetadata()).(*runtimeapi.ContainerMetadata),
		Image:        proto.Clone(c.config.GetImage()).(*runtimeapi.ImageSpec),
		ImageRef:     c.image.ref(),
		ImageId:      c.image.id,
		State:        c.state,
		CreatedAt:    c.createdAt.UnixNano(),
		Labels:       maps.Clone(c.config.GetLabels()),
		Annotations:  maps.Clone(c.config.GetAnnotations()),
	}
}

func (c *container) toStatus() *runtimeapi.ContainerStatus {
	st := &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    proto.Clone(c.config.GetMetadata()).(*runtimeapi.ContainerMetadata),
		State:       c.state,
		CreatedAt:   c.createdAt.UnixNano(),
		ExitCode:    c.exitCode,
		Image:       proto.Clone(c.config.GetImage()).(*runtimeapi.ImageSpec),
		ImageRef:    c.image.ref(),
		ImageId:     c.image.id,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      maps.Clone(c.config.GetLabels()),
		Annotations: maps.Clone(c.config.GetAnnotations()),
		LogPath:     c.logPath,
		StopSignal:  c.config.GetStopSignal(),
	}
	for _, m := range c.config.GetMounts() {
		st.Mounts = append(st.Mounts, proto.Clone(m).(*runtimeapi.Mount))
	}
	if c.resources != nil {
		st.Resources = proto.Clone(c.resources).(*runtimeapi.ContainerResources)
	}
	if !c.startedAt.IsZero() {
		st.StartedAt = c.startedAt.UnixNano()
	}
	if !c.finished.IsZero() {
		st.FinishedAt = c.finished.UnixNano()
	}
	return st
}

// CreateContainer creates a CREATED container in a READY sandbox from a pulled image.
func (r *Runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	switch {
	case req.GetPodSandboxId() == "":
		return nil, status.Error(codes.InvalidArgument, "pod_sandbox_id is required")
	case cfg.GetMetadata() == nil:
		return nil, status.Error(codes.InvalidArgument, "container config and its metadata are required")
	case cfg.GetMetadata().GetName() == "":
		return nil, status.Error(codes.InvalidArgument, "container metadata.name is required")
	case cfg.GetImage().GetImage() == "":
		return nil, status.Error(codes.InvalidArgument, "container config image.image is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.sandboxLocked(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %q is not ready: create containers only in a READY sandbox", s.id)
	}
	img := r.findImageLocked(cfg.GetImage().GetImage())
	if img == nil {
		return nil, status.Errorf(codes.NotFound, "image %q not found: pull it first (crictl pull %s)", cfg.GetImage().GetImage(), cfg.GetImage().GetImage())
	}
	key := containerNameKey(cfg.GetMetadata())
	for _, c := range r.containers {
		if c.sandboxID == s.id && c.nameKey() == key {
			return nil, status.Errorf(codes.AlreadyExists, "container name %q is reserved for %q in pod sandbox %q: remove it first", key, c.id, s.id)
		}
	}
	logPath, err := resolveLogPath(r.cfg.LogRoot, s.config.GetLogDirectory(), cfg.GetLogPath())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	c := &container{
		id:        newID(),
		seq:       r.nextSeqLocked(),
		sandboxID: s.id,
		config:    proto.Clone(cfg).(*runtimeapi.ContainerConfig),
		image:     img,
		logPath:   logPath,
		state:     runtimeapi.ContainerState_CONTAINER_CREATED,
		createdAt: r.clock.Now(),
		program:   parseProgram(append(append([]string{}, cfg.GetCommand()...), cfg.GetArgs()...), unknownRunsForever),
	}
	if res := cfg.GetLinux().GetResources(); res != nil {
		c.resources = &runtimeapi.ContainerResources{Linux: proto.Clone(res).(*runtimeapi.LinuxContainerResources)}
	}
	r.containers[c.id] = c
	klog.FromContext(ctx).V(2).Info("Container created", "containerID", c.id, "podSandboxID", s.id, "name", cfg.GetMetadata().GetName(), "program", fmt.Sprint(c.program))
	r.publishContainerLocked(c, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// StartContainer moves a CREATED container to RUNNING and runs its program until it blocks.
func (r *Runtime) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s: only a CREATED container can be started", c.id, c.state)
	}
	if s := r.sandboxes[c.sandboxID]; s == nil || s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %q of container %q is not ready", c.sandboxID, c.id)
	}
	if err := appendLog(c.logPath, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "start container %q: %v", c.id, err)
	}
	c.state = runtimeapi.ContainerState_CONTAINER_RUNNING
	c.startedAt = r.clock.Now()
	c.exited = make(chan struct{})
	klog.FromContext(ctx).V(2).Info("Container started", "containerID", c.id)
	r.publishContainerLocked(c, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	r.advanceLocked(c)
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer sends the process SIGTERM, which a fake process honours at once (exit 143); with
// timeout 0 it is SIGKILLed (exit 137). Stopping an exited or unknown container is not an error.
func (r *Runtime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	if req.GetContainerId() == "" {
		return nil, status.Error(codes.InvalidArgument, "container_id is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if status.Code(err) == codes.NotFound {
		return &runtimeapi.StopContainerResponse{}, nil
	} else if err != nil {
		return nil, err
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		code := exitCodeSIGTERM
		if req.GetTimeout() == 0 {
			code = exitCodeSIGKILL
		}
		klog.FromContext(ctx).V(2).Info("Stopping container", "containerID", c.id, "timeout", req.GetTimeout())
		r.exitLocked(c, code, "Error", "")
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer forcibly removes a container, killing it if it runs. Unknown IDs are fine.
func (r *Runtime) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	if req.GetContainerId() == "" {
		return nil, status.Error(codes.InvalidArgument, "container_id is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if status.Code(err) == codes.NotFound {
		return &runtimeapi.RemoveContainerResponse{}, nil
	} else if err != nil {
		return nil, err
	}
	klog.FromContext(ctx).V(2).Info("Removing container", "containerID", c.id)
	r.removeContainerLocked(c)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (r *Runtime) removeContainerLocked(c *container) {
	r.exitLocked(c, exitCodeSIGKILL, "Error", "container removed while running")
	delete(r.containers, c.id)
	r.publishContainerLocked(c, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
}

// ListContainers lists containers that match the filter (ID prefix, state, sandbox, labels).
func (r *Runtime) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var items []*runtimeapi.Container
	for _, c := range r.containersLocked() {
		if matchContainer(req.GetFilter(), c.id, c.sandboxID, c.state, c.config.GetLabels()) {
			items = append(items, c.toContainer())
		}
	}
	return &runtimeapi.ListContainersResponse{Containers: items}, nil
}

// ContainerStatus reports one container; with verbose, also its program in the info map.
func (r *Runtime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.ContainerStatusResponse{Status: c.toStatus()}
	if req.GetVerbose() {
		program := make([]string, len(c.program))
		for i, st := range c.program {
			program[i] = st.String()
		}
		info, err := json.Marshal(map[string]any{"sandboxID": c.sandboxID, "program": program, "pc": c.pc})
		if err != nil {
			return nil, status.Errorf(codes.Internal, "encode container info: %v", err)
		}
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

// containerStatusesLocked returns the statuses of a sandbox's containers.
func (r *Runtime) containerStatusesLocked(sandboxID string) []*runtimeapi.ContainerStatus {
	var out []*runtimeapi.ContainerStatus
	for _, c := range r.containersLocked() {
		if c.sandboxID == sandboxID {
			out = append(out, c.toStatus())
		}
	}
	return out
}

// UpdateContainerResources records the new resources; nothing is enforced.
func (r *Runtime) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q has exited: its resources cannot change", c.id)
	}
	if req.GetLinux() != nil {
		c.resources = &runtimeapi.ContainerResources{Linux: proto.Clone(req.GetLinux()).(*runtimeapi.LinuxContainerResources)}
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// ReopenContainerLog is what the kubelet calls after rotating a log file. Since every write opens
// the file anew, there is nothing to reopen; CRI requires an error if the container is not running.
func (r *Runtime) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.containerLocked(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is not running: its log cannot be reopened", c.id)
	}
	if err := appendLog(c.logPath, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "reopen log of container %q: %v", c.id, err)
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// containerLocked finds a container by ID or unique ID prefix.
func (r *Runtime) containerLocked(id string) (*container, error) {
	return lookupByPrefix(r.containers, id, "container")
}

// runningContainerLocked finds a container by ID or prefix and requires it to be RUNNING.
func (r *Runtime) runningContainerLocked(id string) (*container, error) {
	c, err := r.containerLocked(id)
	if err == nil && c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not RUNNING", c.id, c.state)
	}
	return c, err
}

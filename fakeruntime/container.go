package fakeruntime

import (
	"context"
	"fmt"
	"slices"
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
// (process.go runs it), its filesystem and the servers its program runs.
type container struct {
	id        string
	seq       uint64 // creation order
	sandboxID string
	config    *runtimeapi.ContainerConfig // as given, owned by us
	image     *image                      // resolved at create time
	logPath   string                      // resolved; "" discards output
	// partial is the end of what the program wrote to a stream after its last newline: like
	// containerd, the log gets whole lines, and this one when its newline comes or at exit.
	partial   map[runtimeapi.LogStreamType]string
	state     runtimeapi.ContainerState
	createdAt time.Time
	startedAt time.Time
	finished  time.Time
	exitCode  int32
	reason    string
	message   string
	resources *runtimeapi.ContainerResources
	use       usage // what its program uses on paper (usage.go)

	proc    process     // the main program, its next step and $?
	timer   clock.Timer // pending sleep, nil if none
	fs      *rootfs     // CRI mounts over an in-memory layer; gone with the container
	servers []*server   // what its program serves; stopped when it exits

	// exited and attached are made when the container starts. exited is closed when its process
	// exits, which ends exec sessions; attached are the attach sessions that receive what the
	// program writes from now on, and each of their channels is closed then too.
	exited   chan struct{}
	attached map[chan output]struct{}
	// term is the tty of a container started with stdin and a tty whose program is a shell
	// (interactive): its shell reads what attach sessions type. nil otherwise.
	term *terminal
}

// interactive says whether the container's program is an interactive shell: it has stdin and a
// tty (kubectl run -it, kubectl debug -it) and its command is a shell with no script, or empty
// (the image's default; busybox's is sh).
func (c *container) interactive() bool {
	argv := slices.Concat(c.config.GetCommand(), c.config.GetArgs())
	return c.config.GetStdin() && c.config.GetTty() && (len(argv) == 0 || isInteractiveShell(argv))
}

func containerNameKey(m *runtimeapi.ContainerMetadata) string {
	return fmt.Sprintf("%s_%d", m.GetName(), m.GetAttempt())
}

func (c *container) toContainer() *runtimeapi.Container {
	st := c.toStatus()
	return &runtimeapi.Container{Id: st.Id, PodSandboxId: c.sandboxID, Metadata: st.Metadata, Image: st.Image, ImageRef: st.ImageRef,
		ImageId: st.ImageId, State: st.State, CreatedAt: st.CreatedAt, Labels: st.Labels, Annotations: st.Annotations}
}

// toStatus is what ContainerStatus reports. It is built from our state and cloned once, so the
// caller may keep it.
func (c *container) toStatus() *runtimeapi.ContainerStatus {
	st := &runtimeapi.ContainerStatus{
		Id:          c.id,
		Metadata:    c.config.GetMetadata(),
		State:       c.state,
		CreatedAt:   c.createdAt.UnixNano(),
		ExitCode:    c.exitCode,
		Image:       c.config.GetImage(),
		ImageRef:    c.image.ref(),
		ImageId:     c.image.id,
		Reason:      c.reason,
		Message:     c.message,
		Labels:      c.config.GetLabels(),
		Annotations: c.config.GetAnnotations(),
		Mounts:      c.config.GetMounts(),
		LogPath:     c.logPath,
		Resources:   c.resources,
		StopSignal:  c.config.GetStopSignal(),
	}
	if !c.startedAt.IsZero() {
		st.StartedAt = c.startedAt.UnixNano()
	}
	if !c.finished.IsZero() {
		st.FinishedAt = c.finished.UnixNano()
	}
	return proto.Clone(st).(*runtimeapi.ContainerStatus)
}

// CreateContainer creates a CREATED container in a READY sandbox from a pulled image.
func (r *Runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	cfg := req.GetConfig()
	switch {
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
		if c.sandboxID == s.id && containerNameKey(c.config.GetMetadata()) == key {
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
		fs:        newRootfs(cfg.GetMounts(), cfg.GetWorkingDir()),
	}
	if err := writeResolvConf(c.fs, s.config.GetDnsConfig()); err != nil {
		return nil, status.Errorf(codes.Internal, "container %q: /etc/resolv.conf: %v", key, err)
	}
	argv := slices.Concat(cfg.GetCommand(), cfg.GetArgs())
	if len(cfg.GetCommand()) == 0 && len(argv) > 0 {
		argv = withEntrypoint(img.spec.GetImage(), argv)
	}
	if len(argv) > 0 || c.interactive() {
		c.proc.program = parseProgram(argv, unknownRunsForever)
	} else {
		var files map[string]string
		c.proc.program, files = defaultProgram(img.spec.GetImage())
		if err := writeImageFiles(c.fs, files); err != nil {
			return nil, status.Errorf(codes.Internal, "container %q: the image's files: %v", key, err)
		}
	}
	if res := cfg.GetLinux().GetResources(); res != nil {
		c.resources = &runtimeapi.ContainerResources{Linux: proto.Clone(res).(*runtimeapi.LinuxContainerResources)}
	}
	r.containers[c.id] = c
	klog.FromContext(ctx).V(2).Info("Container created", "containerID", c.id, "podSandboxID", s.id, "name", cfg.GetMetadata().GetName(), "program", fmt.Sprint(c.proc.program))
	r.publishLocked(c.id, r.sandboxes[c.sandboxID], runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
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
	c.use.cpuMark = c.startedAt
	c.exited = make(chan struct{})
	c.attached = map[chan output]struct{}{}
	klog.FromContext(ctx).V(2).Info("Container started", "containerID", c.id)
	r.publishLocked(c.id, r.sandboxes[c.sandboxID], runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	if c.interactive() {
		// The shell blocks on its terminal, so it runs on its own goroutine; it prompts once
		// StartContainer has released the lock.
		c.term = newTerminal(&lockedSink{out: lockedContainerOutput{r: r, c: c}}, true)
		r.wg.Add(1)
		go r.runShell(r.background, c, r.viewLocked(c), c.term)
		return &runtimeapi.StartContainerResponse{}, nil
	}
	r.advanceLocked(c)
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer sends the process SIGTERM, which a fake process honours at once (exit 143); with
// timeout 0 it is SIGKILLed (exit 137). Stopping an exited or unknown container is not an error.
func (r *Runtime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
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
	r.publishLocked(c.id, r.sandboxes[c.sandboxID], runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT, c.toStatus())
}

// ListContainers lists containers that match the filter (ID prefix, state, sandbox, labels).
func (r *Runtime) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := req.GetFilter()
	keep := func(c *container) bool {
		return c.matches(f.GetId(), f.GetPodSandboxId(), f.GetState(), f.GetLabelSelector())
	}
	return &runtimeapi.ListContainersResponse{Containers: list(r.containers, keep, (*container).toContainer)}, nil
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
		program := make([]string, len(c.proc.program))
		for i, st := range c.proc.program {
			program[i] = st.String()
		}
		resp.Info = infoJSON("info", map[string]any{"sandboxID": c.sandboxID, "program": program, "pc": c.proc.pc, "status": c.proc.status})
	}
	return resp, nil
}

// containerStatusesLocked returns the statuses of a sandbox's containers.
func (r *Runtime) containerStatusesLocked(sandboxID string) []*runtimeapi.ContainerStatus {
	return list(r.containers, func(c *container) bool { return c.sandboxID == sandboxID }, (*container).toStatus)
}

// UpdateContainerResources records the new resources (in-place resize) and applies them to the
// on-paper model: a new cpu limit sets the burn rate from now on, a new memory limit is what the
// next allocation step is checked against (a lower limit does not kill at once). The container's
// status reports them.
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
		c.markCPU(r.clock.Now()) // a new CPU limit changes the rate from now on
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

// runningContainerLocked finds a container by ID or prefix and requires it to be RUNNING.
func (r *Runtime) runningContainerLocked(id string) (*container, error) {
	c, err := r.containerLocked(id)
	if err == nil && c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %q is %s, not RUNNING", c.id, c.state)
	}
	return c, err
}

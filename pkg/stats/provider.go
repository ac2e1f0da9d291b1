package stats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"
)

// DefaultCacheTTL is how long a Summary is reused: several readers (the API, /metrics/resource,
// the eviction manager) within it cost one round of CRI calls.
const DefaultCacheTTL = time.Second

// Runtime is the part of the CRI RuntimeService the provider calls. Each call returns quickly;
// the caller may keep what it returns.
type Runtime interface {
	ListPodSandbox(ctx context.Context, in *runtimeapi.ListPodSandboxRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error)
	ListContainers(ctx context.Context, in *runtimeapi.ListContainersRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error)
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
	// ListPodSandboxStats may fail (Unimplemented, or containerd 1.6's "failed to decode
	// sandbox container metrics"); the pods' figures are then the sums of their containers', as
	// upstream's fallback does.
	ListPodSandboxStats(ctx context.Context, in *runtimeapi.ListPodSandboxStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error)
}

// Images is the part of the CRI ImageService the provider calls.
type Images interface {
	ImageFsInfo(ctx context.Context, in *runtimeapi.ImageFsInfoRequest, opts ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error)
}

// The CRI gRPC clients are what the provider needs.
var (
	_ Runtime = runtimeapi.RuntimeServiceClient(nil)
	_ Images  = runtimeapi.ImageServiceClient(nil)
)

// Config configures a Provider.
type Config struct {
	// NodeName is Summary.Node.NodeName. Required.
	NodeName string
	// Runtime and Images are the CRI clients. Required.
	Runtime Runtime
	Images  Images
	// Pods returns the pods the kubelet knows (its pod manager); only they are in the Summary.
	// It must not block. Required.
	Pods func() []*corev1.Pod
	// PodLogsDir (podLogsDir) holds the containers' logs, whose sizes are Logs and part of
	// EphemeralStorage.
	PodLogsDir string
	// RootDir (--root-dir) is the node filesystem (nodefs) on a real machine.
	RootDir string
	// FakeCapacity, when set, makes the node's figures up from its pods and this capacity (cpu,
	// memory, ephemeral-storage: the node's reported capacity), for the built-in fake runtime.
	// Nil: the machine's figures (/proc, statfs of RootDir).
	FakeCapacity corev1.ResourceList
	// VolumeStats gives the pods' volume figures (pods[].volume[], and the ephemeral storage of
	// their local ephemeral volumes); nil: none.
	VolumeStats *VolumeStats
	// CacheTTL is how long a Summary is reused (DefaultCacheTTL if 0).
	CacheTTL time.Duration
	// Clock stamps the node's figures and ages the cache (default: the real clock).
	Clock clock.PassiveClock
}

// Provider computes the node's Summary (upstream: the stats Provider and the summary provider).
// Safe for concurrent use.
type Provider struct {
	cfg  Config
	node nodeSource

	mu       sync.Mutex
	cached   *statsapi.Summary
	cachedAt time.Time
	cpu      map[string]cpuSample // last CPU sample per container ID, for usageNanoCores
	// sandboxStatsFallback: ListPodSandboxStats has failed once and that was logged.
	sandboxStatsFallback bool
}

// New validates cfg and returns a Provider.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.NodeName == "":
		return nil, errors.New("stats: Config.NodeName is required")
	case cfg.Runtime == nil || cfg.Images == nil:
		return nil, errors.New("stats: Config.Runtime and Config.Images (the CRI clients) are required")
	case cfg.Pods == nil:
		return nil, errors.New("stats: Config.Pods is required")
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	p := &Provider{cfg: cfg, cpu: map[string]cpuSample{}}
	if cfg.FakeCapacity != nil {
		p.node = newFakeNode(cfg.FakeCapacity, cfg.Clock.Now())
	} else {
		p.node = &machineNode{rootDir: cfg.RootDir}
	}
	return p, nil
}

// Summary returns the node's and its pods' usage (GET /stats/summary), at most CacheTTL old.
// Callers share the returned Summary and must not modify it.
func (p *Provider) Summary(ctx context.Context) (*statsapi.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Clock.Now()
	if p.cached != nil && now.Sub(p.cachedAt) < p.cfg.CacheTTL {
		return p.cached, nil
	}
	s, err := p.summaryLocked(ctx, now)
	if err != nil {
		return nil, err
	}
	p.cached, p.cachedAt = s, now
	return s, nil
}

// summaryLocked makes a new Summary: one round of CRI calls, converted (pods.go), then the
// containers' log sizes and the pods' last volume figures (storage.go, volumes.go), then the
// node's figures (node.go).
func (p *Provider) summaryLocked(ctx context.Context, now time.Time) (*statsapi.Summary, error) {
	in, err := p.listCRI(ctx)
	if err != nil {
		return nil, err
	}
	in.Known = map[string]bool{}
	specs := map[string]*corev1.Pod{}
	for _, pod := range p.cfg.Pods() {
		in.Known[string(pod.UID)] = true
		specs[string(pod.UID)] = pod
	}
	in.Previous, in.Now = p.cpu, now
	pods, cpu := podStatsFromCRI(in)
	p.cpu = cpu

	imageFs, err := p.imageFsUsage(ctx)
	if err != nil {
		return nil, err
	}
	measureLogs(pods, p.cfg.PodLogsDir, now)
	addVolumes(pods, specs, p.cfg.VolumeStats)
	node, err := p.node.stats(nodeInput{Pods: pods, ImageFs: imageFs, Now: now})
	if err != nil {
		return nil, fmt.Errorf("node figures: %w", err)
	}
	shareFs(pods, node.Fs)
	node.NodeName = p.cfg.NodeName
	return &statsapi.Summary{Node: node, Pods: pods}, nil
}

// listCRI asks the runtime for its sandboxes, containers and their stats.
func (p *Provider) listCRI(ctx context.Context) (criInput, error) {
	rt := p.cfg.Runtime
	var in criInput
	sandboxes, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return in, fmt.Errorf("list pod sandboxes: %w", err)
	}
	containers, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return in, fmt.Errorf("list containers: %w", err)
	}
	cstats, err := rt.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return in, fmt.Errorf("list container stats: %w", err)
	}
	in.Sandboxes, in.Containers, in.ContainerStats = sandboxes.GetItems(), containers.GetContainers(), cstats.GetStats()
	sstats, err := rt.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	if err != nil {
		p.noteNoSandboxStats(ctx, err)
		return in, nil // SandboxStats nil: pods are the sums of their containers
	}
	in.SandboxStats = sstats.GetStats()
	return in, nil
}

// noteNoSandboxStats logs, once per Provider at Info and then at V(4), that the runtime could
// not give pod sandbox stats, so pod figures are the sums of their containers' (upstream's
// fallback when pod stats are missing). A runtime may lack the call (Unimplemented), or fail it
// as a whole: containerd 1.6 answers "failed to decode sandbox container metrics" as long as one
// of its sandboxes is not ready, e.g. the stopped sandbox of a finished pod.
func (p *Provider) noteNoSandboxStats(ctx context.Context, err error) {
	logger := klog.FromContext(ctx)
	if p.sandboxStatsFallback {
		logger.V(4).Info("No pod sandbox stats this round: pod figures are the sums of their containers'", "err", err)
		return
	}
	p.sandboxStatsFallback = true
	msg := "The runtime cannot give pod sandbox stats: pod figures are the sums of their containers' (logged once)"
	if status.Code(err) == codes.Unimplemented {
		logger.V(2).Info(msg, "err", err)
		return
	}
	logger.Info(msg, "err", err)
}

// imageFsUsage is what the runtime's image filesystem holds (CRI ImageFsInfo).
func (p *Provider) imageFsUsage(ctx context.Context) (*runtimeapi.FilesystemUsage, error) {
	resp, err := p.cfg.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("image filesystem info: %w", err)
	}
	if fss := resp.GetImageFilesystems(); len(fss) > 0 {
		return fss[0], nil
	}
	return &runtimeapi.FilesystemUsage{}, nil
}

// CPUAndMemoryStats is Summary with only its CPU and memory figures (CPUAndMemory), for
// /stats/summary?only_cpu_and_memory=true (upstream: GetCPUAndMemoryStats).
func (p *Provider) CPUAndMemoryStats(ctx context.Context) (*statsapi.Summary, error) {
	s, err := p.Summary(ctx)
	if err != nil {
		return nil, err
	}
	return CPUAndMemory(s), nil
}

// CPUAndMemory is the Summary with only CPU and memory figures, as upstream answers
// /stats/summary?only_cpu_and_memory=true (GetCPUAndMemoryStats). Pure.
func CPUAndMemory(s *statsapi.Summary) *statsapi.Summary {
	out := &statsapi.Summary{Node: statsapi.NodeStats{
		NodeName: s.Node.NodeName, StartTime: s.Node.StartTime, CPU: s.Node.CPU, Memory: s.Node.Memory,
	}, Pods: make([]statsapi.PodStats, 0, len(s.Pods))}
	for _, pod := range s.Pods {
		ps := statsapi.PodStats{PodRef: pod.PodRef, StartTime: pod.StartTime, CPU: pod.CPU, Memory: pod.Memory,
			Containers: make([]statsapi.ContainerStats, 0, len(pod.Containers))}
		for _, c := range pod.Containers {
			ps.Containers = append(ps.Containers, statsapi.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory})
		}
		out.Pods = append(out.Pods, ps)
	}
	return out
}

// timeOf is a CRI timestamp (Unix nanoseconds) as a metav1.Time; 0 is now.
func timeOf(ns int64, now time.Time) metav1.Time {
	if ns == 0 {
		return metav1.NewTime(now)
	}
	return metav1.NewTime(time.Unix(0, ns))
}

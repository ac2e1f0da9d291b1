package stats

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// stubCRI answers like a runtime without sandbox stats: ListPodSandboxStats fails with
// sandboxErr, Unimplemented if nil.
type stubCRI struct {
	calls      int
	sandboxErr error
}

func (s *stubCRI) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxResponse, error) {
	s.calls++
	return &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{sandbox("s1", "u1", "web", runtimeapi.PodSandboxState_SANDBOX_READY, 1)}}, nil
}

func (s *stubCRI) ListContainers(context.Context, *runtimeapi.ListContainersRequest, ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{ctr("c1", "s1", "app", runtimeapi.ContainerState_CONTAINER_RUNNING, 2)}}, nil
}

func (s *stubCRI) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest, ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{Stats: []*runtimeapi.ContainerStats{cstats("c1", t0.UnixNano(), 10, 100, 200<<20)}}, nil
}

func (s *stubCRI) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest, ...grpc.CallOption) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	if s.sandboxErr != nil {
		return nil, s.sandboxErr
	}
	return nil, status.Error(codes.Unimplemented, "not implemented")
}

func (s *stubCRI) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest, ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

// A Summary is reused for CacheTTL, so several readers cost one round of CRI calls; a runtime
// without ListPodSandboxStats still gives pod figures (the sums of the containers').
func TestProviderCachesAndFallsBack(t *testing.T) {
	cri := &stubCRI{}
	clock := clocktesting.NewFakePassiveClock(t0)
	p, err := New(Config{
		NodeName: "n1", Runtime: cri, Images: cri, Clock: clock, PodLogsDir: t.TempDir(),
		Pods:         func() []*corev1.Pod { return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}} },
		FakeCapacity: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := p.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 || ptr.Deref(s.Pods[0].Memory.WorkingSetBytes, 0) != 200<<20 || s.Node.NodeName != "n1" {
		t.Fatalf("Summary = %+v, want pod web with the container's 200Mi", s)
	}
	if e := s.Pods[0].Containers[0].Logs; e == nil || e.CapacityBytes == nil || *e.CapacityBytes != 1<<30 {
		t.Errorf("container logs %+v, want nodefs' 1Gi capacity", e)
	}
	_, _ = p.Summary(ctx)
	if cri.calls != 1 {
		t.Errorf("two reads within the TTL made %d rounds of CRI calls, want 1", cri.calls)
	}
	clock.SetTime(t0.Add(DefaultCacheTTL))
	_, _ = p.Summary(ctx)
	if cri.calls != 2 {
		t.Errorf("a read after the TTL made %d rounds in all, want 2", cri.calls)
	}
}

// containerd 1.6 fails ListPodSandboxStats as a whole while one of its sandboxes is not ready;
// the Summary still comes, with pod figures summed from the containers', and the fallback is
// logged once, not on every round.
func TestProviderFallsBackWhenSandboxStatsFail(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	cri := &stubCRI{sandboxErr: status.Error(codes.Unknown, `failed to decode sandbox container metrics for sandbox "s0": `+
		`failed to get pod sandbox stats since sandbox container "s0" is not in ready state`)}
	clock := clocktesting.NewFakePassiveClock(t0)
	p, err := New(Config{
		NodeName: "n1", Runtime: cri, Images: cri, Clock: clock, PodLogsDir: t.TempDir(),
		Pods:         func() []*corev1.Pod { return []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{UID: "u1"}}} },
		FakeCapacity: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		clock.SetTime(t0.Add(time.Duration(i) * DefaultCacheTTL))
		s, err := p.Summary(ctx)
		if err != nil {
			t.Fatalf("round %d: %v, want the containers' sums", i, err)
		}
		if len(s.Pods) != 1 || ptr.Deref(s.Pods[0].Memory.WorkingSetBytes, 0) != 200<<20 {
			t.Fatalf("round %d: pods %+v, want web with its container's 200Mi", i, s.Pods)
		}
	}
	if cri.calls != 3 {
		t.Errorf("%d rounds of CRI calls, want 3", cri.calls)
	}
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if n := strings.Count(logs, "logged once"); n != 1 || !strings.Contains(logs, "not in ready state") {
		t.Errorf("the fallback was logged %d times at Info, want once with the runtime's error:\n%s", n, logs)
	}
}

func TestNewRefusesMissingFields(t *testing.T) {
	if _, err := New(Config{NodeName: "n1"}); err == nil {
		t.Error("New without CRI clients: no error")
	}
}

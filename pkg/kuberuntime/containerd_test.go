package kuberuntime

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2/ktesting"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// goneRuntime answers every stop and remove with one gRPC code, as containerd 1.6 answers
// NotFound for a container or sandbox it does not know (1.7+, and our fake runtime, answer OK).
// Other methods are not expected: the embedded nil client panics if one is called.
type goneRuntime struct {
	runtimeapi.RuntimeServiceClient
	code  codes.Code
	calls atomic.Int32
}

func (r *goneRuntime) answer() error {
	r.calls.Add(1)
	return status.Error(r.code, "an answer of the test's runtime")
}

func (r *goneRuntime) StopContainer(context.Context, *runtimeapi.StopContainerRequest, ...grpc.CallOption) (*runtimeapi.StopContainerResponse, error) {
	return nil, r.answer()
}

func (r *goneRuntime) RemoveContainer(context.Context, *runtimeapi.RemoveContainerRequest, ...grpc.CallOption) (*runtimeapi.RemoveContainerResponse, error) {
	return nil, r.answer()
}

func (r *goneRuntime) StopPodSandbox(context.Context, *runtimeapi.StopPodSandboxRequest, ...grpc.CallOption) (*runtimeapi.StopPodSandboxResponse, error) {
	return nil, r.answer()
}

func (r *goneRuntime) RemovePodSandbox(context.Context, *runtimeapi.RemovePodSandboxRequest, ...grpc.CallOption) (*runtimeapi.RemovePodSandboxResponse, error) {
	return nil, r.answer()
}

// CRI: stopping or removing what is already gone must succeed, and the kubelet treats NotFound
// that way (upstream: kuberuntime_container.go killContainer and kuberuntime_gc.go ignore
// NotFound). Any other error is still reported, so a pod is not forgotten while its containers run.
func TestStopAndRemoveWhatTheRuntimeNoLongerHas(t *testing.T) {
	tests := []struct {
		code    codes.Code
		wantErr bool
	}{
		{codes.NotFound, false},
		{codes.Unavailable, true},
	}
	for _, tc := range tests {
		t.Run(tc.code.String(), func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			rt := &goneRuntime{code: tc.code}
			m, err := New(Config{Runtime: rt, Image: runtimeapi.NewImageServiceClient(nil), PodLogsDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			st := &kubecontainer.PodStatus{
				Sandboxes:  []*runtimeapi.PodSandboxStatus{{Id: "sandbox-1", State: runtimeapi.PodSandboxState_SANDBOX_READY}},
				Containers: []*kubecontainer.ContainerStatus{{ID: "container-1", Name: "app", State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
			}
			if err := m.KillPod(ctx, nil, st, 0); (err != nil) != tc.wantErr {
				t.Errorf("KillPod: %v, want an error: %v", err, tc.wantErr)
			}
			running := &kubecontainer.RunningPod{
				Sandboxes:  []*runtimeapi.PodSandbox{{Id: "sandbox-1"}},
				Containers: []*runtimeapi.Container{{Id: "container-1"}},
			}
			if err := m.RemovePod(ctx, running); (err != nil) != tc.wantErr {
				t.Errorf("RemovePod: %v, want an error: %v", err, tc.wantErr)
			}
			// StopContainer, StopPodSandbox; RemoveContainer, StopPodSandbox, RemovePodSandbox.
			if got := rt.calls.Load(); got != 5 {
				t.Errorf("the runtime was called %d times, want 5", got)
			}
		})
	}
}

// The sandbox config follows upstream generatePodSandboxConfig where a real runtime cares: a
// host-network pod sets no hostname (it shares the node's UTS namespace, and runc refuses to set
// one there) and asks for the node's network namespace; other pods get their name (or
// spec.hostname); the log directory is absolute, since containerd writes the logs there.
func TestSandboxConfig(t *testing.T) {
	logs := t.TempDir()
	m := &Manager{podLogsDir: logs}
	pod := func(hostNetwork bool, hostname string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
			Spec:       corev1.PodSpec{HostNetwork: hostNetwork, Hostname: hostname},
		}
	}
	tests := []struct {
		name         string
		pod          *corev1.Pod
		wantHostname string
		wantNetwork  runtimeapi.NamespaceMode
	}{
		{"host network", pod(true, ""), "", runtimeapi.NamespaceMode_NODE},
		{"host network ignores spec.hostname", pod(true, "db"), "", runtimeapi.NamespaceMode_NODE},
		{"pod network", pod(false, ""), "web", runtimeapi.NamespaceMode_POD},
		{"pod network with spec.hostname", pod(false, "db"), "db", runtimeapi.NamespaceMode_POD},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustSandboxConfig(t, m, tc.pod)
			if cfg.GetHostname() != tc.wantHostname {
				t.Errorf("hostname %q, want %q", cfg.GetHostname(), tc.wantHostname)
			}
			if got := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork(); got != tc.wantNetwork {
				t.Errorf("network namespace %s, want %s", got, tc.wantNetwork)
			}
			if want := filepath.Join(logs, "default_web_uid-1"); cfg.GetLogDirectory() != want || !filepath.IsAbs(cfg.GetLogDirectory()) {
				t.Errorf("log directory %q, want %q", cfg.GetLogDirectory(), want)
			}
		})
	}
}

package kubelet

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/kuberuntime/logs"
	"github.com/minikubelet/minikubelet/pkg/server"
)

// What the kubelet API asks of the Kubelet: its pods, a container or sandbox to exec, attach or
// port-forward into, a container's logs (upstream: server.HostInterface, which the Kubelet
// implements in kubelet_getters.go GetPods and kubelet_pods.go GetContainerLogs).
var _ server.Host = (*Kubelet)(nil)

// GetPods returns the pods this node runs, for /pods.
func (k *Kubelet) GetPods() []*corev1.Pod { return k.podManager.GetPods() }

// podAndStatus finds a desired pod by namespace/name (and UID if given) with the runtime's view of
// it from the PLEG cache.
func (k *Kubelet) podAndStatus(namespace, name string, uid types.UID) (*corev1.Pod, *kubecontainer.PodStatus, error) {
	pod, ok := k.podManager.GetPodByFullName(namespace, name)
	if !ok || (uid != "" && pod.UID != uid) {
		return nil, nil, fmt.Errorf("pod %s/%s not found on this node", namespace, name)
	}
	st, err := k.podCache.Get(pod.UID)
	if err != nil {
		return nil, nil, fmt.Errorf("pod %s/%s: %w", namespace, name, err)
	}
	return pod, st, nil
}

// ResolveContainer returns the CRI ID of a running container and its sandbox, for exec and attach.
func (k *Kubelet) ResolveContainer(namespace, name string, uid types.UID, container string) (string, string, error) {
	_, st, err := k.podAndStatus(namespace, name, uid)
	if err != nil {
		return "", "", err
	}
	c := st.FindContainer(container)
	if c == nil || c.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return "", "", fmt.Errorf("container %q in pod %s/%s is not running", container, namespace, name)
	}
	sandboxID, _ := readySandbox(st)
	return c.ID, sandboxID, nil
}

// ResolvePodSandbox returns the ready sandbox of a pod, for port-forward.
func (k *Kubelet) ResolvePodSandbox(namespace, name string, uid types.UID) (string, error) {
	_, st, err := k.podAndStatus(namespace, name, uid)
	if err != nil {
		return "", err
	}
	id, ok := readySandbox(st)
	if !ok {
		return "", fmt.Errorf("pod %s/%s has no ready sandbox", namespace, name)
	}
	return id, nil
}

func readySandbox(st *kubecontainer.PodStatus) (string, bool) {
	for _, s := range st.Sandboxes {
		if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			return s.GetId(), true
		}
	}
	return "", false
}

// ContainerLogs streams a container's CRI log file — the current instance, or with
// opts.Previous the one before it — as `kubectl logs` asks (upstream: GetContainerLogs).
func (k *Kubelet) ContainerLogs(ctx context.Context, namespace, name, container string, opts *corev1.PodLogOptions, stdout, stderr io.Writer) error {
	pod, st, err := k.podAndStatus(namespace, name, "")
	if err != nil {
		return err
	}
	var instances []*kubecontainer.ContainerStatus
	for _, c := range st.Containers {
		if c.Name == container {
			instances = append(instances, c)
		}
	}
	want := 0
	if opts.Previous {
		want = 1
	}
	if len(instances) <= want {
		if opts.Previous {
			return fmt.Errorf("previous terminated container %q in pod %q not found", container, name)
		}
		return fmt.Errorf("container %q in pod %q is waiting to start", container, name)
	}
	inst := instances[want]
	path := kuberuntime.ContainerLogFile(k.opts.Config.PodLogsDir, pod.Namespace, pod.Name, pod.UID, container, inst.RestartCount)
	isRunning := func() bool {
		cur, err := k.podCache.Get(pod.UID)
		if err != nil {
			return false
		}
		for _, c := range cur.Containers {
			if c.ID == inst.ID {
				return c.State == runtimeapi.ContainerState_CONTAINER_RUNNING
			}
		}
		return false
	}
	return logs.ReadLogs(ctx, k.clock, path, logs.NewOptions(opts, k.clock.Now()), isRunning, stdout, stderr)
}

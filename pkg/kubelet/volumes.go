package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/kuberuntime"
	"github.com/minikubelet/minikubelet/pkg/podmanager"
	"github.com/minikubelet/minikubelet/pkg/podworkers"
	"github.com/minikubelet/minikubelet/pkg/secretmanager"
	"github.com/minikubelet/minikubelet/pkg/volume"
	"github.com/minikubelet/minikubelet/pkg/volumemanager"
)

// runtimeHelper gives kuberuntime a container's env and mounts: env from Secrets, ConfigMaps,
// the downward API and the Services (service links), mounts from the volumes the volume manager set
// up and the pod's managed /etc/hosts (upstream: kubelet_pods.go GenerateRunContainerOptions).
type runtimeHelper struct {
	secrets  secretmanager.Manager
	volumes  *volumemanager.Manager // the pods' set-up volumes, which containers mount
	services *services              // the service links; nil: none
	hostIP   string
	// allocatable is the node's allocatable, as node status reports it: a resourceFieldRef to a
	// limit a container does not set reads it.
	allocatable   corev1.ResourceList
	clusterDomain string // the domain of a pod's FQDN in /etc/hosts (clusterDomain)
	nodeHostsFile string // the node's hosts file, the base of a host-network pod's; "" is /etc/hosts
	rootDir       string // pods/<uid>/ holds each pod's etc-hosts, containers/<name> each container's termination message
}

var _ kuberuntime.OptionsGenerator = (*runtimeHelper)(nil)

// GenerateRunContainerOptions is called just before each container is created. podIP is the
// sandbox's IP; a host-network pod's IPs are the node's, as upstream's SyncPod passes them.
func (h *runtimeHelper) GenerateRunContainerOptions(ctx context.Context, pod *corev1.Pod, c *corev1.Container, podIP string) (*kuberuntime.RunContainerOptions, error) {
	hostIPs := []string{h.hostIP}
	var podIPs []string
	switch {
	case pod.Spec.HostNetwork:
		podIPs = hostIPs
	case podIP != "":
		podIPs = []string{podIP}
	}
	serviceEnv, err := h.services.env(pod)
	if err != nil {
		return nil, err
	}
	envs, err := volume.MakeEnvironment(pod, c, volume.EnvConfig{
		PodIPs:          podIPs,
		HostIPs:         hostIPs,
		NodeAllocatable: h.allocatable,
		ServiceEnv:      serviceEnv,
		GetSecret:       func(ns, name string) (*corev1.Secret, error) { return h.secrets.GetSecret(ctx, ns, name) },
		GetConfigMap:    func(ns, name string) (*corev1.ConfigMap, error) { return h.secrets.GetConfigMap(ctx, ns, name) },
	})
	if err != nil {
		return nil, err
	}
	opts := &kuberuntime.RunContainerOptions{}
	for _, e := range envs {
		opts.Envs = append(opts.Envs, kuberuntime.EnvVar{Name: e.Name, Value: e.Value})
	}
	mounts, err := h.volumeMounts(pod, c, envs)
	if err != nil {
		return nil, err
	}
	opts.Mounts = append(opts.Mounts, mounts...)
	if shouldMountHostsFile(pod, c, podIPs) {
		m, err := h.hostsMount(pod, podIPs)
		if err != nil {
			return nil, err
		}
		opts.Mounts = append(opts.Mounts, m)
	}
	// The container's own directory, where kuberuntime makes its termination message file.
	if c.TerminationMessagePath != "" {
		dir := filepath.Join(h.rootDir, "pods", string(pod.UID), "containers", c.Name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		opts.PodContainerDir = dir
	}
	return opts, nil
}

// volumeMounts are the container's mounts of the volumes the volume manager set up: read-only
// when the mount asks, for API-data volumes, and for a claim mounted read-only (upstream
// makeMounts, with the mounter's ReadOnly attribute), with subPath and subPathExpr resolved
// inside their volume (expanded from the container's env), and each mount's propagation.
func (h *runtimeHelper) volumeMounts(pod *corev1.Pod, c *corev1.Container, envs []volume.EnvVar) ([]kuberuntime.Mount, error) {
	if h.volumes == nil {
		return nil, nil
	}
	mounted := h.volumes.GetMountedVolumesForPod(pod.UID)
	dirs := make(map[string]string, len(mounted))
	readOnly := map[string]bool{} // container paths of read-only claims
	for name, v := range mounted {
		dirs[name] = v.HostPath
	}
	for _, m := range c.VolumeMounts {
		if mounted[m.Name].ReadOnly {
			readOnly[m.MountPath] = true
		}
	}
	resolved, err := volume.Mounts(pod, c, dirs, volume.MountConfig{PodDir: filepath.Join(h.rootDir, "pods", string(pod.UID)), Env: envs})
	if err != nil {
		return nil, err
	}
	propagation := map[string]runtimeapi.MountPropagation{} // by container path
	for _, m := range c.VolumeMounts {
		if propagation[m.MountPath], err = translateMountPropagation(m.MountPropagation); err != nil {
			return nil, err
		}
	}
	var mounts []kuberuntime.Mount
	for _, m := range resolved {
		mounts = append(mounts, kuberuntime.Mount{ContainerPath: m.ContainerPath, HostPath: m.HostPath,
			ReadOnly: m.ReadOnly || readOnly[m.ContainerPath], Propagation: propagation[m.ContainerPath]})
	}
	return mounts, nil
}

// translateMountPropagation is a volumeMount's mountPropagation as CRI says it (upstream
// kubelet_pods.go translateMountPropagation): none is private, HostToContainer rslave,
// Bidirectional rshared. The runtime applies it; containerd refuses a non-private one whose
// host path is not on a shared (or, for HostToContainer, slave) mount ("... is not a shared
// mount"). The API server allows Bidirectional only for privileged containers.
func translateMountPropagation(mode *corev1.MountPropagationMode) (runtimeapi.MountPropagation, error) {
	switch {
	case mode == nil || *mode == corev1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case *mode == corev1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case *mode == corev1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	default:
		return 0, fmt.Errorf("invalid MountPropagation mode: %q", *mode)
	}
}

// hostsMount writes the pod's hosts file, <root>/pods/<uid>/etc-hosts, and mounts it read-write
// at /etc/hosts (upstream makeHostsMount).
func (h *runtimeHelper) hostsMount(pod *corev1.Pod, podIPs []string) (kuberuntime.Mount, error) {
	nodeHostsFile := h.nodeHostsFile
	if nodeHostsFile == "" {
		nodeHostsFile = etcHostsPath
	}
	content, err := hostsFileContent(pod, podIPs, h.clusterDomain, nodeHostsFile)
	if err != nil {
		return kuberuntime.Mount{}, err
	}
	dir := filepath.Join(h.rootDir, "pods", string(pod.UID))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return kuberuntime.Mount{}, err
	}
	path := filepath.Join(dir, "etc-hosts")
	if err := writeHostsFile(path, content); err != nil {
		return kuberuntime.Mount{}, fmt.Errorf("write the pod's hosts file: %w", err)
	}
	return kuberuntime.Mount{ContainerPath: etcHostsPath, HostPath: path}, nil
}

// podVolumeState answers the volume manager from the pod workers and the pod manager: a pod gets
// no new volume once its worker stops it, and loses its volumes once its containers are gone
// (upstream: the podStateProvider the populator asks, implemented by the pod workers).
type podVolumeState struct {
	workers *podworkers.PodWorkers
	pods    *podmanager.Manager
}

var _ volumemanager.PodStateProvider = podVolumeState{}

func (s podVolumeState) ShouldPodContainersBeTerminating(uid types.UID) bool {
	state, ok := s.workers.State(uid)
	return ok && state != podworkers.Syncing
}

// ShouldPodRuntimeBeRemoved: its worker terminated it, or it has no worker and is not desired.
func (s podVolumeState) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	state, ok := s.workers.State(uid)
	if !ok {
		_, desired := s.pods.GetPodByUID(uid)
		return !desired
	}
	return state == podworkers.Terminated || state == podworkers.Finished
}

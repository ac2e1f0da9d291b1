package kuberuntime

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/internal/journal"
	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// PodDNS decides a pod's DNS config (pkg/dns Configurer; upstream runtimeHelper.GetPodDNS).
type PodDNS interface {
	// PodDNS returns the sandbox's DnsConfig; it fails only when the node's resolvConf cannot be
	// read. It may record Events; the caller owns the result.
	PodDNS(ctx context.Context, pod *corev1.Pod) (*runtimeapi.DNSConfig, error)
}

// sandboxConfig is the CRI PodSandboxConfig of a pod (upstream: kuberuntime_sandbox.go
// generatePodSandboxConfig). It fails when the pod's DNS config cannot be made.
func (m *Manager) sandboxConfig(ctx context.Context, pod *corev1.Pod, attempt uint32) (*runtimeapi.PodSandboxConfig, error) {
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		LogDirectory: podLogDir(m.podLogsDir, pod.Namespace, pod.Name, pod.UID),
		Labels:       sandboxLabels(pod),
		Annotations:  pod.Annotations,
		Linux:        sandboxLinuxConfig(pod), // security_context.go
	}
	cfg.Linux.CgroupParent = podCgroupParent(pod) // resources.go
	if m.dns != nil {
		dnsConfig, err := m.dns.PodDNS(ctx, pod)
		if err != nil {
			return nil, err
		}
		cfg.DnsConfig = dnsConfig
	}
	// A host-network pod shares the node's UTS namespace, so it must not set a hostname.
	if !pod.Spec.HostNetwork {
		cfg.Hostname = podHostname(pod)
	}
	cfg.PortMappings = portMappings(pod)
	return cfg, nil
}

// portMappings are the ports of a pod's sandbox: every port of its regular containers, as
// upstream (generatePodSandboxConfig with kubecontainer.MakePortMappings), those without a
// hostPort too — the runtime publishes only those with one (containerd hands them to CNI
// portmap, which DNATs hostIP:hostPort, or every local address without a hostIP, to the pod).
// Within one container a port listed twice (the same name, or unnamed with the same address
// family, protocol, hostIP, containerPort and hostPort) is mapped once. nil when there are none.
// Pure.
func portMappings(pod *corev1.Pod) []*runtimeapi.PortMapping {
	var out []*runtimeapi.PortMapping
	for _, c := range pod.Spec.Containers {
		seen := map[string]bool{}
		for _, p := range c.Ports {
			key := p.Name
			if key == "" {
				family := "any"
				if ip := net.ParseIP(p.HostIP); ip != nil && ip.To4() == nil {
					family = "v6"
				} else if p.HostIP != "" {
					family = "v4"
				}
				key = fmt.Sprintf("%s-%s-%s:%d:%d", family, p.Protocol, p.HostIP, p.ContainerPort, p.HostPort)
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, &runtimeapi.PortMapping{
				Protocol: protocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP,
			})
		}
	}
	return out
}

// podHostname is the hostname a pod sees: kubecontainer.PodHostnameAndDomain, which the managed
// /etc/hosts uses too (hostnameOverride, else hostname, else the pod's name, cut to 63
// characters, runc's limit). The API server has validated the fields; should one still be
// invalid, the pod's name, cut.
func podHostname(pod *corev1.Pod) string {
	if hostname, _, err := kubecontainer.PodHostnameAndDomain(pod, ""); err == nil {
		return hostname
	}
	hostname, _ := kubecontainer.TruncateHostname(pod.Name, pod.Name)
	return hostname
}

// namespaceOptions are the Linux namespaces a pod's sandbox and containers share with the node
// or each other (upstream kuberuntime/util NamespacesForPod, without user namespaces).
func namespaceOptions(pod *corev1.Pod) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
	if pod.Spec.HostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostPID {
		ns.Pid = runtimeapi.NamespaceMode_NODE
	} else if pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace {
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	return ns
}

func protocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	default:
		return runtimeapi.Protocol_TCP
	}
}

func (m *Manager) createSandbox(ctx context.Context, pod *corev1.Pod, attempt uint32) (string, error) {
	config, err := m.sandboxConfig(ctx, pod, attempt)
	if err != nil {
		return "", fmt.Errorf("failed to generate sandbox config for pod %q: %w", podDesc(pod), err)
	}
	start := m.clock.Now()
	resp, err := m.runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: config})
	m.noteCRI("RunPodSandbox", journal.Pod(pod), start, err, "id", resp.GetPodSandboxId())
	if err != nil {
		return "", fmt.Errorf("run pod sandbox: %w", err)
	}
	return resp.GetPodSandboxId(), nil
}

// containerConfig is the CRI ContainerConfig of one container (upstream:
// kuberuntime_container.go generateContainerConfig). opts carries the resolved env and mounts;
// without an OptionsGenerator they are empty and the spec's literal env values are used. An
// error (runAsNonRoot with a root image, a profile that cannot be used) is the container's
// CreateContainerConfigError.
func (m *Manager) containerConfig(ctx context.Context, pod *corev1.Pod, c *corev1.Container, restartCount int, imageRef string, opts *RunContainerOptions) (*runtimeapi.ContainerConfig, error) {
	// The image's USER decides runAsNonRoot and is the default runAsUser (security_context.go).
	uid, username, err := m.imageUser(ctx, c.Image)
	if err != nil {
		return nil, err
	}
	if err := verifyRunAsNonRoot(pod, c, uid, username); err != nil {
		return nil, err
	}
	sc, err := containerSecurityContext(pod, c, uid, username)
	if err != nil {
		return nil, err
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: uint32(restartCount)},
		Image:       &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image},
		WorkingDir:  c.WorkingDir,
		Labels:      containerLabels(pod, c),
		Annotations: containerAnnotations(pod, c, restartCount),
		LogPath:     containerLogPath(c.Name, restartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: sc,
			Resources: containerResources(pod, c, m.memoryCapacity, m.cgroupV2)}, // resources.go
	}
	if m.options == nil {
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
			}
		}
	}
	for _, e := range opts.Envs {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	// $(NAME) in command and args: the container's env as given to the runtime (upstream
	// ExpandContainerCommandAndArgs).
	envs := make(map[string]string, len(cfg.Envs))
	for _, e := range cfg.Envs {
		envs[e.Key] = string(e.Value)
	}
	cfg.Command, cfg.Args = kubecontainer.ExpandAll(c.Command, envs), kubecontainer.ExpandAll(c.Args, envs)
	for _, mnt := range opts.Mounts {
		cfg.Mounts = append(cfg.Mounts, &runtimeapi.Mount{ContainerPath: mnt.ContainerPath, HostPath: mnt.HostPath,
			Readonly: mnt.ReadOnly, Propagation: mnt.Propagation})
	}
	return cfg, nil
}

func isNotFound(err error) bool { return status.Code(err) == codes.NotFound }

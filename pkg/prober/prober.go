package prober

// One probe of a container: pick the handler, retry errors, turn the outcome into a Result and
// an Event (upstream: pkg/kubelet/prober/prober.go; the outcomes are pkg/probe/probe.go's).

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	kubecontainer "github.com/minikubelet/minikubelet/pkg/container"
)

// maxProbeRetries is how often a probe that errored (could not run) is tried within one turn.
const maxProbeRetries = 3

// Event reasons, as upstream pkg/kubelet/events.
const (
	reasonUnhealthy    = "Unhealthy"
	reasonProbeWarning = "ProbeWarning"
)

// outcome is what one run of a handler says (upstream probe.Result, whose lowercase words reach
// Event messages: "errored and resulted in unknown state").
type outcome string

const (
	outcomeSuccess outcome = "success"
	outcomeWarning outcome = "warning" // a success with something to say: an Event ProbeWarning
	outcomeFailure outcome = "failure"
	outcomeUnknown outcome = "unknown"
)

// probe runs c's probe of kind once (with retries while it errors) and returns the result, the
// handler's output, and an error when the probe could not run at all (then the result does not
// count). It records the Unhealthy or ProbeWarning Event. containerID is in the API form.
func (m *Manager) probe(ctx context.Context, kind Kind, pod *corev1.Pod, status *corev1.PodStatus, c *corev1.Container, containerID string) (Result, string, error) {
	logger := klog.FromContext(ctx)
	spec := probeSpec(c, kind)
	if spec == nil {
		return Success, "", nil
	}
	p := withDefaults(*spec)

	var (
		out    outcome
		output string
		err    error
	)
	for range maxProbeRetries {
		if out, output, err = m.runProbe(ctx, &p, pod, status, c, containerID); err == nil || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return Failure, "", ctx.Err() // shutting down: no verdict, no Event
	}

	if err != nil {
		logger.V(1).Info("Probe errored", "probeResult", out, "err", err)
		m.event(pod, c, corev1.EventTypeWarning, reasonUnhealthy, "%s probe errored and resulted in %s state: %s", kind, out, err)
		return Failure, "", err
	}
	switch out {
	case outcomeSuccess:
		logger.V(3).Info("Probe succeeded")
		return Success, output, nil
	case outcomeWarning:
		m.event(pod, c, corev1.EventTypeWarning, reasonProbeWarning, "%s probe warning: %s", kind, output)
		logger.V(3).Info("Probe succeeded with a warning", "output", output)
		return Success, output, nil
	case outcomeFailure:
		logger.V(1).Info("Probe failed", "probeResult", out, "output", output)
		m.event(pod, c, corev1.EventTypeWarning, reasonUnhealthy, "%s probe failed: %s", kind, output)
		return Failure, output, nil
	default:
		logger.V(1).Info("Probe unknown without error", "probeResult", out)
		return Failure, output, nil
	}
}

// runProbe runs the probe's one handler. The host of httpGet, tcpSocket and grpc defaults to the
// pod IP; exec's command has $(VAR) of the container's plain env values expanded (not valueFrom,
// as upstream's ExpandContainerCommandOnlyStatic).
func (m *Manager) runProbe(ctx context.Context, p *corev1.Probe, pod *corev1.Pod, status *corev1.PodStatus, c *corev1.Container, containerID string) (outcome, string, error) {
	logger := klog.FromContext(ctx)
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	switch {
	case p.Exec != nil:
		cmd := expandCommand(p.Exec.Command, c.Env)
		logger.V(4).Info("Exec-Probe runProbe", "execCommand", cmd)
		return execProbe(ctx, m.cfg.Exec, runtimeID(containerID), cmd, timeout)

	case p.HTTPGet != nil:
		req, err := newHTTPRequest(ctx, p.HTTPGet, c, status.PodIP)
		if err != nil {
			return outcomeUnknown, "", err
		}
		logger.V(4).Info("HTTP-Probe", "url", req.URL.String(), "timeout", timeout)
		return httpProbe(m.http, req, timeout)

	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return outcomeUnknown, "", err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = status.PodIP
		}
		logger.V(4).Info("TCP-Probe", "host", host, "port", port, "timeout", timeout)
		return tcpProbe(ctx, host, port, timeout)

	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		logger.V(4).Info("GRPC-Probe", "host", status.PodIP, "service", service, "port", p.GRPC.Port, "timeout", timeout)
		return grpcProbe(ctx, status.PodIP, service, int(p.GRPC.Port), timeout)

	default:
		return outcomeUnknown, "", fmt.Errorf("missing probe handler for %s_%s(%s):%s", pod.Name, pod.Namespace, pod.UID, c.Name)
	}
}

// event records an Event on the pod, naming the container by its field path, as upstream's
// GenerateContainerRef: spec.containers{name} or spec.initContainers{name}.
func (m *Manager) event(pod *corev1.Pod, c *corev1.Container, eventType, reason, format string, args ...any) {
	field := "spec.containers{" + c.Name + "}"
	if isInitContainer(pod, c.Name) {
		field = "spec.initContainers{" + c.Name + "}"
	}
	ref := &corev1.ObjectReference{
		Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
		ResourceVersion: pod.ResourceVersion, FieldPath: field,
	}
	m.cfg.Recorder.Eventf(ref, eventType, reason, format, args...)
}

// runtimeID is the bare runtime ID of an API container ID "<runtime>://<id>".
func runtimeID(containerID string) string {
	if _, id, ok := strings.Cut(containerID, "://"); ok {
		return id
	}
	return containerID
}

// expandCommand replaces $(NAME) in each word of cmd with the value of the container's env entry
// NAME (its plain value: "" for a valueFrom entry), as upstream ExpandContainerCommandOnlyStatic.
func expandCommand(cmd []string, env []corev1.EnvVar) []string {
	return kubecontainer.ExpandAll(cmd, kubecontainer.StaticEnv(env))
}

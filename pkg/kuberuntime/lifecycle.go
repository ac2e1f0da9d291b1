package kuberuntime

// Lifecycle hooks (upstream: pkg/kubelet/lifecycle/handlers.go HandlerRunner, and
// kuberuntime_container.go: postStart right after StartContainer, preStop inside the grace
// period before StopContainer, in killContainer).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/minikubelet/minikubelet/internal/journal"
)

// Event reasons and the waiting reason of a failed postStart hook (upstream events.go,
// kuberuntime_container.go ErrPostStartHook).
const (
	EventFailedPostStartHook = "FailedPostStartHook"
	EventFailedPreStopHook   = "FailedPreStopHook"
	ReasonPostStartHookError = "PostStartHookError"
)

// hookUserAgent is what an httpGet hook's request says it is, as upstream ("kube-lifecycle/"
// and the Kubernetes minor version).
const hookUserAgent = "kube-lifecycle/1.36"

// runHook runs handler for container c of pod (upstream handlerRunner.Run): exec through CRI
// ExecSync without a timeout, httpGet to the pod IP (or handler's host), sleep on the clock. It
// returns the message of a failure, which goes to the container's status, never to an Event
// (it may hold secrets). It returns when the handler is done or ctx ends.
func (m *Manager) runHook(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID, podIP string, h *corev1.LifecycleHandler) (string, error) {
	switch {
	case h.Exec != nil:
		resp, err := m.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: containerID, Cmd: h.Exec.Command})
		output := ""
		if err == nil && resp.GetExitCode() != 0 {
			output = string(append(resp.GetStdout(), resp.GetStderr()...))
			err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(h.Exec.Command, " "), resp.GetExitCode(), resp.GetStderr())
		}
		if err != nil {
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q", h.Exec.Command, c.Name, podDesc(pod), err, output), err
		}
		return "", nil
	case h.HTTPGet != nil:
		if err := m.httpHook(ctx, c, podIP, h.HTTPGet); err != nil {
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v", h.HTTPGet.Path, c.Name, podDesc(pod), err), err
		}
		return "", nil
	case h.Sleep != nil:
		t := m.clock.NewTimer(time.Duration(h.Sleep.Seconds) * time.Second)
		defer t.Stop()
		select {
		case <-t.C():
			return "", nil
		case <-ctx.Done():
			err := errors.New("container terminated before sleep hook finished")
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v", h.Sleep.Seconds, c.Name, podDesc(pod), err), err
		}
	}
	err := fmt.Errorf("invalid handler: %v", h)
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

// httpHook sends the hook's GET; as upstream, only a failed request is a failure, not the
// response's status code. HTTPS verifies the pod's certificate (upstream does not: this project
// never switches TLS verification off).
func (m *Manager) httpHook(ctx context.Context, c *corev1.Container, podIP string, g *corev1.HTTPGetAction) error {
	host := g.Host
	if host == "" {
		host = podIP
	}
	if host == "" {
		return errors.New("failed to find networking container: the pod has no IP")
	}
	port, err := containerPort(c, g.Port.String())
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: g.Path}
	if i := strings.IndexByte(g.Path, '?'); i >= 0 { // a query in path, as url.Parse would read it
		u.Path, u.RawQuery = g.Path[:i], g.Path[i+1:]
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", hookUserAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := m.hookClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	return nil
}

// containerPort resolves a hook's port: a number, or the name of one of c's ports.
func containerPort(c *corev1.Container, port string) (int, error) {
	if n, err := strconv.Atoi(port); err == nil {
		if n <= 0 || n > 65535 {
			return 0, fmt.Errorf("invalid port number: %d", n)
		}
		return n, nil
	}
	for _, p := range c.Ports {
		if p.Name == port {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("couldn't find port: %s in %s", port, c.Name)
}

// postStart runs c's postStart hook right after its start. On failure the container is killed
// (a FailedPostStartHook Event) and the sync reports PostStartHookError with the hook's message.
func (m *Manager) postStart(ctx context.Context, pod *corev1.Pod, c *corev1.Container, containerID, podIP string) *ContainerError {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return nil
	}
	msg, err := m.runHook(ctx, pod, c, containerID, podIP, c.Lifecycle.PostStart)
	if err == nil {
		return nil
	}
	klog.FromContext(ctx).Info("PostStart hook failed", "pod", klog.KObj(pod), "container", c.Name, "err", err.Error())
	m.containerEvent(pod, c.Name, containerID, corev1.EventTypeWarning, EventFailedPostStartHook, "PostStartHook failed")
	if kerr := m.killContainer(ctx, pod, journal.Pod(pod), containerID, c.Name, "FailedPostStartHook", gracePeriod(pod), nil); kerr != nil {
		klog.FromContext(ctx).Error(kerr, "Failed to kill a container whose postStart hook failed", "pod", klog.KObj(pod), "container", c.Name)
	}
	return &ContainerError{Name: c.Name, Reason: ReasonPostStartHookError, Message: msg}
}

// killContainer stops one container (upstream killContainer): a Killing Event with message
// ("" says "Stopping container <name>"); its preStop hook, given at most the grace period, whose
// time is taken from it; then its turn in order (sidecars after the app); then StopContainer with
// what is left of the grace period, but at least 2 s. pod may be nil (a pod the kubelet no
// longer knows): no Event, no hook, no order.
func (m *Manager) killContainer(ctx context.Context, pod *corev1.Pod, ref journal.PodRef, id, name, message string, grace int64, order *stopOrder) error {
	if pod != nil {
		if message == "" {
			message = "Stopping container " + name
		}
		m.containerEvent(pod, name, id, corev1.EventTypeNormal, EventKilling, "%s", message)
		if c := containerSpec(pod, name); c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil && grace > 0 {
			grace -= m.preStop(ctx, pod, c, id, grace)
		}
	}
	if grace > 0 {
		grace = remainingGrace(grace, order.waitForTurn(ctx, m.clock, name, grace))
	}
	defer order.stopped(name)
	return m.stopContainer(ctx, ref, id, name, max(grace, minGracePeriod))
}

// preStop runs c's preStop hook, waiting at most grace seconds for it, and returns the whole
// seconds it took (upstream executePreStopHook). A failure is a FailedPreStopHook Event; the
// container is stopped either way.
func (m *Manager) preStop(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, grace int64) int64 {
	start := m.clock.Now()
	hookCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		podIP := m.podIP(hookCtx, pod)
		if _, err := m.runHook(hookCtx, pod, c, id, podIP, c.Lifecycle.PreStop); err != nil && hookCtx.Err() == nil { // not when cut at the grace period
			klog.FromContext(ctx).Info("PreStop hook failed", "pod", klog.KObj(pod), "container", c.Name, "err", err.Error())
			m.containerEvent(pod, c.Name, id, corev1.EventTypeWarning, EventFailedPreStopHook, "PreStopHook failed")
		}
	}()
	timer := m.clock.NewTimer(time.Duration(grace) * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C():
		klog.FromContext(ctx).V(2).Info("PreStop hook not completed in grace period", "pod", klog.KObj(pod), "container", c.Name, "gracePeriod", grace)
	}
	return int64(m.clock.Since(start) / time.Second)
}

// podIP is the IP of pod's ready sandbox, for an httpGet preStop hook ("" if none).
func (m *Manager) podIP(ctx context.Context, pod *corev1.Pod) string {
	st, err := m.GetPodStatus(ctx, pod.UID, pod.Name, pod.Namespace)
	if err != nil || len(st.IPs) == 0 {
		return ""
	}
	return st.IPs[0]
}

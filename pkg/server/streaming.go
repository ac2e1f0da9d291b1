package server

import (
	"errors"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/proxy"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// streamTarget is the pod (and container) named by an /exec, /attach, /portForward or /run URL.
type streamTarget struct {
	namespace, pod string
	uid            types.UID // "" unless the URL carries it
	container      string
}

func streamTargetFrom(r *http.Request) streamTarget {
	return streamTarget{
		namespace: r.PathValue("namespace"),
		pod:       r.PathValue("pod"),
		uid:       types.UID(r.PathValue("uid")),
		container: r.PathValue("container"),
	}
}

// streamOptions are the stdin/stdout/stderr/tty query parameters of exec and attach.
type streamOptions struct {
	stdin, stdout, stderr, tty bool
}

// parseStreamOptions reads them as upstream remotecommand.NewOptions, under the names the API
// server sends (corev1.ExecStdinParam "input", ExecStdoutParam "output", ExecStderrParam "error",
// ExecTTYParam "tty"): each is on only if "1"; a TTY merges stderr into stdout; at least one
// stream is needed.
func parseStreamOptions(query url.Values) (streamOptions, error) {
	o := streamOptions{
		stdin:  query.Get(corev1.ExecStdinParam) == "1",
		stdout: query.Get(corev1.ExecStdoutParam) == "1",
		stderr: query.Get(corev1.ExecStderrParam) == "1",
		tty:    query.Get(corev1.ExecTTYParam) == "1",
	}
	if o.tty {
		o.stderr = false
	}
	if !o.stdin && !o.stdout && !o.stderr {
		return o, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	return o, nil
}

// containerStream is the common front of exec and attach: the target container, resolved to its
// CRI ID, and the stream options. On a problem it has already answered and returns ok=false.
func (s *Server) containerStream(w http.ResponseWriter, r *http.Request) (containerID string, opts streamOptions, ok bool) {
	t := streamTargetFrom(r)
	opts, err := parseStreamOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", opts, false
	}
	containerID, _, err = s.cfg.Host.ResolveContainer(t.namespace, t.pod, t.uid, t.container)
	if err != nil {
		writeHostError(w, err)
		return "", opts, false
	}
	return containerID, opts, true
}

// getExec serves /exec/{namespace}/{pod}[/{uid}]/{container}?command=…&input=1…: ask the
// runtime for a streaming URL with CRI Exec, then proxy the upgraded connection to it.
func (s *Server) getExec(w http.ResponseWriter, r *http.Request) {
	containerID, opts, ok := s.containerStream(w, r)
	if !ok {
		return
	}
	resp, err := s.cfg.Streaming.Exec(r.Context(), &runtimeapi.ExecRequest{
		ContainerId: containerID,
		Cmd:         r.URL.Query()[corev1.ExecCommandParam],
		Stdin:       opts.stdin,
		Stdout:      opts.stdout,
		Stderr:      opts.stderr,
		Tty:         opts.tty,
	})
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	proxyStream(w, r, resp.GetUrl())
}

// getAttach serves /attach/{namespace}/{pod}[/{uid}]/{container}, like getExec with CRI Attach.
func (s *Server) getAttach(w http.ResponseWriter, r *http.Request) {
	containerID, opts, ok := s.containerStream(w, r)
	if !ok {
		return
	}
	resp, err := s.cfg.Streaming.Attach(r.Context(), &runtimeapi.AttachRequest{
		ContainerId: containerID,
		Stdin:       opts.stdin,
		Stdout:      opts.stdout,
		Stderr:      opts.stderr,
		Tty:         opts.tty,
	})
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	proxyStream(w, r, resp.GetUrl())
}

// getPortForward serves /portForward/{namespace}/{pod}[/{uid}] with CRI PortForward. The request
// names no ports: kubectl opens one pair of streams per port, and the runtime's streaming server
// reads the port from each stream's headers (upstream passes no ports either).
func (s *Server) getPortForward(w http.ResponseWriter, r *http.Request) {
	t := streamTargetFrom(r)
	sandboxID, err := s.cfg.Host.ResolvePodSandbox(t.namespace, t.pod, t.uid)
	if err != nil {
		writeHostError(w, err)
		return
	}
	resp, err := s.cfg.Streaming.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID})
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	proxyStream(w, r, resp.GetUrl())
}

// getRun serves POST /run/{namespace}/{pod}[/{uid}]/{container}?cmd=…: run a command to
// completion with CRI ExecSync and answer its stdout followed by its stderr. As upstream, the
// command is the "cmd" parameter split on spaces, the answer is labelled application/json
// whatever the command printed, and a non-zero exit is a 500.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	t := streamTargetFrom(r)
	cmdline := r.URL.Query().Get("cmd")
	if cmdline == "" {
		http.Error(w, "query parameter cmd is required, e.g. ?cmd=ls+-l", http.StatusBadRequest)
		return
	}
	containerID, _, err := s.cfg.Host.ResolveContainer(t.namespace, t.pod, t.uid, t.container)
	if err != nil {
		writeHostError(w, err)
		return
	}
	resp, err := s.cfg.Streaming.ExecSync(r.Context(), &runtimeapi.ExecSyncRequest{
		ContainerId: containerID,
		Cmd:         strings.Split(cmdline, " "),
		Timeout:     0, // no timeout, as upstream RunInContainer
	})
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	if resp.GetExitCode() != 0 {
		http.Error(w, "command terminated with non-zero exit code: "+strconv.Itoa(int(resp.GetExitCode())), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(resp.GetStdout(), resp.GetStderr()...))
}

// proxyStream hands the request to the runtime's streaming server at rawURL, as upstream's
// getExec: an upgrade-aware reverse proxy that requires an upgrade (SPDY, or WebSocket), dials
// the runtime, replays the request there and then copies bytes both ways until one side closes.
// It uses no transport (a plain dial), since the URL is the runtime's local streaming server.
func proxyStream(w http.ResponseWriter, r *http.Request, rawURL string) {
	logger := klog.FromContext(r.Context())
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		logger.Error(err, "Runtime returned an unusable streaming URL", "url", rawURL)
		http.Error(w, fmt.Sprintf("runtime returned an unusable streaming URL %q", rawURL), http.StatusInternalServerError)
		return
	}
	logger.V(4).Info("Proxying stream to the runtime", "path", r.URL.Path, "streamingURL", u.Redacted())
	handler := proxy.NewUpgradeAwareHandler(u, nil /*transport*/, false /*wrapTransport*/, true /*upgradeRequired*/, proxyErrorResponder{logger: logger})
	handler.ServeHTTP(w, r)
}

// proxyErrorResponder answers a failed proxy attempt. Upstream's responder always answers 500;
// ours keeps the status of an API error, so a request without an upgrade gets the 400 "Upgrade
// request required" the proxy means, and a failure to reach the runtime is still a 500.
type proxyErrorResponder struct {
	logger klog.Logger
}

func (p proxyErrorResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	status := http.StatusInternalServerError
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) && apiStatus.Status().Code != 0 {
		status = int(apiStatus.Status().Code)
	}
	if status >= http.StatusInternalServerError {
		p.logger.Error(err, "Error while proxying a stream to the runtime")
	}
	http.Error(w, err.Error(), status)
}

// writeHostError answers a failed pod or container lookup: 404 for NotFound, else 500.
func writeHostError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if apierrors.IsNotFound(err) {
		status = http.StatusNotFound
	}
	http.Error(w, err.Error(), status)
}

// writeRuntimeError maps a CRI error as upstream's streaming.WriteError: NotFound → 404,
// ResourceExhausted (too many streams in flight) → 429, anything else → 500.
func writeRuntimeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch grpcstatus.Code(err) {
	case codes.NotFound:
		status = http.StatusNotFound
	case codes.InvalidArgument, codes.FailedPrecondition:
		status = http.StatusBadRequest
	case codes.ResourceExhausted:
		status = http.StatusTooManyRequests
	}
	http.Error(w, err.Error(), status)
}

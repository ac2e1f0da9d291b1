package server

import (
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/minikubelet/minikubelet/pkg/exec"
)

// The handlers here read the target from the URL, resolve it with Host and hand the request to
// pkg/exec (s.exec), which asks the runtime for a streaming URL and proxies the stream.

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

// containerStream is the common front of exec and attach: the stream options (checked first, as
// upstream: 400 before any lookup) and the target container, resolved to its CRI ID. On a
// problem it has already answered and returns ok=false.
func (s *Server) containerStream(w http.ResponseWriter, r *http.Request) (containerID string, opts exec.Options, ok bool) {
	t := streamTargetFrom(r)
	opts, err := exec.ParseOptions(r.URL.Query())
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

// getExec serves /exec/{namespace}/{pod}[/{uid}]/{container}?command=…&input=1…: find the
// container, then pkg/exec asks the runtime for a streaming URL with CRI Exec and proxies the
// upgraded connection to it.
func (s *Server) getExec(w http.ResponseWriter, r *http.Request) {
	containerID, opts, ok := s.containerStream(w, r)
	if !ok {
		return
	}
	s.exec.Exec(w, r, containerID, r.URL.Query()[corev1.ExecCommandParam], opts)
}

// getAttach serves /attach/{namespace}/{pod}[/{uid}]/{container}, like getExec with CRI Attach.
func (s *Server) getAttach(w http.ResponseWriter, r *http.Request) {
	containerID, opts, ok := s.containerStream(w, r)
	if !ok {
		return
	}
	s.exec.Attach(w, r, containerID, opts)
}

// getPortForward serves /portForward/{namespace}/{pod}[/{uid}]: find the pod's sandbox (ports
// belong to the pod's network, not to a container), then pkg/exec with CRI PortForward.
func (s *Server) getPortForward(w http.ResponseWriter, r *http.Request) {
	t := streamTargetFrom(r)
	sandboxID, err := s.cfg.Host.ResolvePodSandbox(t.namespace, t.pod, t.uid)
	if err != nil {
		writeHostError(w, err)
		return
	}
	s.exec.PortForward(w, r, sandboxID)
}

// getRun serves POST /run/{namespace}/{pod}[/{uid}]/{container}?cmd=…: run a command to
// completion with CRI ExecSync and answer its stdout followed by its stderr. As upstream, the
// command is the "cmd" parameter split on spaces, the answer is labelled application/json
// whatever the command printed, and a non-zero exit is a 500. No stream: pkg/exec is not
// involved beyond mapping a CRI error to a status.
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
		exec.WriteError(w, err)
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

// writeHostError answers a failed pod or container lookup: 404 for NotFound, else 500.
func writeHostError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if apierrors.IsNotFound(err) {
		status = http.StatusNotFound
	}
	http.Error(w, err.Error(), status)
}

package fake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The admin API: fault injection as JSON over HTTP on a unix socket (endpoints in doc.go).

// KillContainerRequest is the body of POST /kill-container.
type KillContainerRequest struct {
	ID       string `json:"id"`
	ExitCode int32  `json:"exitCode"`
}

// SandboxNotReadyRequest is the body of POST /sandbox-not-ready.
type SandboxNotReadyRequest struct {
	ID string `json:"id"`
}

// FailNextPullsRequest is the body of POST /fail-next-pulls.
type FailNextPullsRequest struct {
	Image   string `json:"image"`
	Count   int    `json:"count"`
	Message string `json:"message,omitempty"`
}

// LatencyRequest is the body of POST /latency. Duration is a Go duration like "1.5s".
type LatencyRequest struct {
	Method   string `json:"method"`
	Duration string `json:"duration"`
}

// RuntimeNotReadyRequest is the body of POST /runtime-not-ready.
type RuntimeNotReadyRequest struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// State is the answer of GET /state: what the runtime holds, for people and labs to inspect.
type State struct {
	Sandboxes  []SandboxState   `json:"sandboxes"`
	Containers []ContainerState `json:"containers"`
	Images     []string         `json:"images"`
}

// SandboxState is one sandbox in State.
type SandboxState struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	State     string `json:"state"`
	IP        string `json:"ip,omitempty"`
}

// ContainerState is one container in State.
type ContainerState struct {
	ID        string `json:"id"`
	SandboxID string `json:"sandboxId"`
	Name      string `json:"name"`
	Attempt   uint32 `json:"attempt"`
	State     string `json:"state"`
	ExitCode  int32  `json:"exitCode"`
}

// adminError is the body of every failed admin call.
type adminError struct {
	Error string `json:"error"`
}

// Snapshot returns the runtime's state, oldest objects first.
func (r *Runtime) Snapshot() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := State{Sandboxes: []SandboxState{}, Containers: []ContainerState{}, Images: []string{}}
	for _, s := range r.sandboxesLocked() {
		ss := SandboxState{ID: s.id, Name: s.config.GetMetadata().GetName(), Namespace: s.config.GetMetadata().GetNamespace(), State: s.state.String()}
		if s.ip.IsValid() {
			ss.IP = s.ip.String()
		}
		st.Sandboxes = append(st.Sandboxes, ss)
	}
	for _, c := range r.containersLocked() {
		st.Containers = append(st.Containers, ContainerState{
			ID: c.id, SandboxID: c.sandboxID, Name: c.config.GetMetadata().GetName(),
			Attempt: c.config.GetMetadata().GetAttempt(), State: c.state.String(), ExitCode: c.exitCode,
		})
	}
	for _, img := range sortedValues(r.images, func(i *image) uint64 { return i.seq }) {
		st.Images = append(st.Images, append(append([]string{}, img.tags...), img.digests...)...)
	}
	return st
}

// adminHandler routes the admin API.
func (r *Runtime) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.Snapshot())
	})
	mux.HandleFunc("POST /kill-container", adminCall(func(req KillContainerRequest) error {
		return r.KillContainer(req.ID, req.ExitCode)
	}))
	mux.HandleFunc("POST /sandbox-not-ready", adminCall(func(req SandboxNotReadyRequest) error {
		return r.SetSandboxNotReady(req.ID)
	}))
	mux.HandleFunc("POST /fail-next-pulls", adminCall(func(req FailNextPullsRequest) error {
		return r.FailNextPulls(req.Image, req.Count, req.Message)
	}))
	mux.HandleFunc("POST /latency", adminCall(func(req LatencyRequest) error {
		d, err := time.ParseDuration(req.Duration)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "duration %q: %v (write it like \"1.5s\")", req.Duration, err)
		}
		return r.AddLatency(req.Method, d)
	}))
	mux.HandleFunc("POST /runtime-not-ready", adminCall(func(req RuntimeNotReadyRequest) error {
		r.SetRuntimeNotReady(req.Reason, req.Message)
		return nil
	}))
	mux.HandleFunc("POST /runtime-ready", adminCall(func(struct{}) error {
		r.SetRuntimeReady()
		return nil
	}))
	return mux
}

// adminCall decodes a JSON body into Req, calls fn and maps its gRPC status to HTTP.
func adminCall[Req any](fn func(Req) error) http.HandlerFunc {
	return func(w http.ResponseWriter, httpReq *http.Request) {
		var req Req
		dec := json.NewDecoder(io.LimitReader(httpReq.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
			writeJSON(w, http.StatusBadRequest, adminError{Error: "decode request body: " + err.Error()})
			return
		}
		if err := fn(req); err != nil {
			writeJSON(w, httpStatusFor(status.Code(err)), adminError{Error: status.Convert(err).Message()})
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	}
}

func httpStatusFor(code codes.Code) int {
	switch code {
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.NotFound:
		return http.StatusNotFound
	case codes.FailedPrecondition, codes.AlreadyExists:
		return http.StatusConflict
	default:
		return http.StatusInternalServerError
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}

// AdminClient calls a fake runtime's admin API over its unix socket.
type AdminClient struct {
	socket string
	http   *http.Client
}

// NewAdminClient returns a client for the admin socket at path (Runtime.AdminSocket, by default
// "<CRI socket>.admin").
func NewAdminClient(socket string) *AdminClient {
	transport := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}
	return &AdminClient{socket: socket, http: &http.Client{Transport: transport, Timeout: 30 * time.Second}}
}

// KillContainer asks the runtime to end a running container with exitCode.
func (c *AdminClient) KillContainer(ctx context.Context, id string, exitCode int32) error {
	return c.post(ctx, "/kill-container", KillContainerRequest{ID: id, ExitCode: exitCode})
}

// SetSandboxNotReady asks the runtime to mark a sandbox NOTREADY.
func (c *AdminClient) SetSandboxNotReady(ctx context.Context, id string) error {
	return c.post(ctx, "/sandbox-not-ready", SandboxNotReadyRequest{ID: id})
}

// FailNextPulls asks the runtime to fail the next n pulls of image with message.
func (c *AdminClient) FailNextPulls(ctx context.Context, image string, n int, message string) error {
	return c.post(ctx, "/fail-next-pulls", FailNextPullsRequest{Image: image, Count: n, Message: message})
}

// AddLatency asks the runtime to delay a CRI method ("*" for all) by d; d <= 0 removes it.
func (c *AdminClient) AddLatency(ctx context.Context, method string, d time.Duration) error {
	return c.post(ctx, "/latency", LatencyRequest{Method: method, Duration: d.String()})
}

// SetRuntimeNotReady asks the runtime to report RuntimeReady=false.
func (c *AdminClient) SetRuntimeNotReady(ctx context.Context, reason, message string) error {
	return c.post(ctx, "/runtime-not-ready", RuntimeNotReadyRequest{Reason: reason, Message: message})
}

// SetRuntimeReady asks the runtime to report RuntimeReady=true again.
func (c *AdminClient) SetRuntimeReady(ctx context.Context) error {
	return c.post(ctx, "/runtime-ready", struct{}{})
}

// State fetches the runtime's sandboxes, containers and images.
func (c *AdminClient) State(ctx context.Context) (State, error) {
	var st State
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://fake-runtime/state", nil)
	if err != nil {
		return st, fmt.Errorf("build admin request: %w", err)
	}
	err = c.do(req, &st)
	return st, err
}

func (c *AdminClient) post(ctx context.Context, path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode admin request %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://fake-runtime"+path, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("build admin request %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, nil)
}

// do sends req and decodes a successful answer into out (if not nil).
func (c *AdminClient) do(req *http.Request, out any) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("call fake runtime admin API at %s (is the fake runtime running?): %w", c.socket, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read admin answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var ae adminError
		if json.Unmarshal(body, &ae) != nil || ae.Error == "" {
			ae.Error = string(body)
		}
		return fmt.Errorf("fake runtime admin %s %s: %s (HTTP %d)", req.Method, req.URL.Path, ae.Error, resp.StatusCode)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("decode admin answer to %s %s: %w", req.Method, req.URL.Path, err)
		}
	}
	return nil
}

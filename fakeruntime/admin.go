package fakeruntime

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

// The admin API: fault injection as JSON over HTTP on a unix socket, Config.AdminSocket. GET
// /state answers a State; every fault of Faults() is served at POST <Path>.

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
	// CPUQuota and MemoryLimit are the container's cpu quota (µs per period) and memory limit
	// (bytes) as last set by CreateContainer or UpdateContainerResources; 0: none.
	CPUQuota    int64 `json:"cpuQuota,omitempty"`
	MemoryLimit int64 `json:"memoryLimitBytes,omitempty"`
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
	for _, s := range sorted(r.sandboxes) {
		ss := SandboxState{ID: s.id, Name: s.config.GetMetadata().GetName(), Namespace: s.config.GetMetadata().GetNamespace(), State: s.state.String()}
		if s.ip.IsValid() {
			ss.IP = s.ip.String()
		}
		st.Sandboxes = append(st.Sandboxes, ss)
	}
	for _, c := range sorted(r.containers) {
		st.Containers = append(st.Containers, ContainerState{
			ID: c.id, SandboxID: c.sandboxID, Name: c.config.GetMetadata().GetName(),
			Attempt: c.config.GetMetadata().GetAttempt(), State: c.state.String(), ExitCode: c.exitCode,
			CPUQuota: c.resources.GetLinux().GetCpuQuota(), MemoryLimit: c.resources.GetLinux().GetMemoryLimitInBytes(),
		})
	}
	for _, img := range sorted(r.images) {
		st.Images = append(append(st.Images, img.tags...), img.digests...)
	}
	return st
}

// adminHandler routes the admin API.
func (r *Runtime) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, r.Snapshot())
	})
	for _, f := range Faults() {
		mux.HandleFunc("POST "+f.Path, func(w http.ResponseWriter, req *http.Request) {
			var args FaultArgs
			dec := json.NewDecoder(io.LimitReader(req.Body, 1<<20))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&args); err != nil && !errors.Is(err, io.EOF) {
				writeJSON(w, http.StatusBadRequest, adminError{Error: "decode request body: " + err.Error()})
				return
			}
			if err := r.Inject(f.Name(), args); err != nil {
				writeJSON(w, httpStatusFor(status.Code(err)), adminError{Error: status.Convert(err).Message()})
				return
			}
			writeJSON(w, http.StatusOK, struct{}{})
		})
	}
	return mux
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

// Inject asks the runtime to put the fault called name in place with args (Runtime.Inject).
func (c *AdminClient) Inject(ctx context.Context, name string, args FaultArgs) error {
	f, err := findFault(name)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPost, f.Path, args, nil)
}

// KillContainer is Inject for the fault hack/bench uses; other callers name the fault, as the
// fake-runtime inject command does: Inject(ctx, "fail-pulls", FaultArgs{…}).

// KillContainer asks the runtime to end a running container with exitCode.
func (c *AdminClient) KillContainer(ctx context.Context, id string, exitCode int32) error {
	return c.Inject(ctx, "kill-container", FaultArgs{ID: id, ExitCode: exitCode})
}

// State fetches the runtime's sandboxes, containers and images.
func (c *AdminClient) State(ctx context.Context) (State, error) {
	var st State
	err := c.call(ctx, http.MethodGet, "/state", nil, &st)
	return st, err
}

// call sends method path with body as JSON (nil: no body) and decodes a successful answer into
// out (nil: ignored).
func (c *AdminClient) call(ctx context.Context, method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		data, _ := json.Marshal(body) // FaultArgs always encodes
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://fake-runtime"+path, reader)
	if err != nil {
		return fmt.Errorf("build admin request %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("call fake runtime admin API at %s (is the fake runtime running?): %w", c.socket, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read admin answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var ae adminError
		if json.Unmarshal(answer, &ae) != nil || ae.Error == "" {
			ae.Error = string(answer)
		}
		return fmt.Errorf("fake runtime admin %s %s: %s (HTTP %d)", method, path, ae.Error, resp.StatusCode)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("decode admin answer to %s %s: %w", method, path, err)
		}
	}
	return nil
}

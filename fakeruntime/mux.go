package fakeruntime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// NodeMetadataKey is the gRPC metadata key that names the node a CRI call on a Mux is for.
const NodeMetadataKey = "minikubelet-node"

// Mux serves the fake runtimes of many nodes — `minikubelet --nodes N` — with one gRPC server on
// one unix socket, instead of a socket, a gRPC server and a connection per node (about 10
// goroutines and 130 KB of buffers each). Every node keeps a Runtime of its own (its sandboxes,
// containers, pod IPs, streaming server); each call names its node in the metadata key
// NodeMetadataKey and is served by that node's Runtime, with that Runtime's interceptors.
// There is no admin (fault injection) socket per node.
type Mux struct {
	socket string
	ready  chan struct{}

	mu       sync.RWMutex
	runtimes map[string]*Runtime // by node, while their Serve runs
}

// NewMux returns a Mux that will serve on the unix socket path.
func NewMux(socket string) (*Mux, error) {
	if socket == "" {
		return nil, errors.New("fake runtime: NewMux needs the path of the CRI socket to serve")
	}
	if err := checkSocketPath(socket); err != nil {
		return nil, err
	}
	return &Mux{socket: socket, ready: make(chan struct{}), runtimes: map[string]*Runtime{}}, nil
}

// NewRuntime makes node's Runtime (New with cfg, whose Socket is ignored). Its Serve serves its
// streaming server and adds it to the Mux until ctx ends.
func (m *Mux) NewRuntime(node string, cfg Config) (*Runtime, error) {
	cfg.Socket = m.socket // not listened on by r: the Mux serves node's calls
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	r.cfg.AdminSocket = "" // none
	r.mux, r.node = m, node
	return r, nil
}

// Endpoint is the CRI endpoint of the Mux; a client must name its node in every call.
func (m *Mux) Endpoint() string { return "unix://" + m.socket }

// Ready is closed once Serve accepts connections.
func (m *Mux) Ready() <-chan struct{} { return m.ready }

// Serve listens on the socket and serves every added node's CRI calls until ctx ends.
func (m *Mux) Serve(ctx context.Context) error {
	l, err := listenUnix(m.socket)
	if err != nil {
		return err
	}
	defer l.Close()
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxMsgSize), grpc.MaxSendMsgSize(maxMsgSize))
	srv.RegisterService(m.route(&runtimeapi.RuntimeService_ServiceDesc), nil)
	srv.RegisterService(m.route(&runtimeapi.ImageService_ServiceDesc), nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	close(m.ready)
	klog.FromContext(ctx).Info("Fake container runtimes serving", "endpoint", m.Endpoint())
	select {
	case <-ctx.Done():
		srv.Stop() // the nodes' runtimes have stopped first: nothing is in flight worth waiting for
		return nil
	case err := <-served:
		return fmt.Errorf("fake runtime: serve %s: %w", m.socket, err)
	}
}

// route is desc with every handler resolving its node's Runtime first: the generated handlers
// take the server implementation as an argument, so the same code serves each node.
func (m *Mux) route(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	routed := *desc
	routed.HandlerType = (*any)(nil)
	routed.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, md := range desc.Methods {
		routed.Methods[i] = grpc.MethodDesc{MethodName: md.MethodName,
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				r, err := m.runtimeFor(ctx)
				if err != nil {
					return nil, err
				}
				return md.Handler(r, ctx, dec, r.unaryInterceptor(r.logger))
			}}
	}
	routed.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, sd := range desc.Streams {
		routed.Streams[i] = sd
		routed.Streams[i].Handler = func(_ any, stream grpc.ServerStream) error {
			r, err := m.runtimeFor(stream.Context())
			if err != nil {
				return err
			}
			info := &grpc.StreamServerInfo{FullMethod: "/" + desc.ServiceName + "/" + sd.StreamName, IsServerStream: sd.ServerStreams}
			return r.streamInterceptor(r.logger)(r, stream, info, sd.Handler)
		}
	}
	return &routed
}

// runtimeFor is the Runtime of the node a call names.
func (m *Mux) runtimeFor(ctx context.Context) (*Runtime, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	nodes := md.Get(NodeMetadataKey)
	if len(nodes) != 1 {
		return nil, status.Errorf(codes.FailedPrecondition, "this socket serves the fake runtimes of many nodes (minikubelet --nodes): name one in the gRPC metadata %q", NodeMetadataKey)
	}
	m.mu.RLock()
	r := m.runtimes[nodes[0]]
	m.mu.RUnlock()
	if r == nil {
		return nil, status.Errorf(codes.Unavailable, "no fake runtime is serving node %q here", nodes[0])
	}
	return r, nil
}

// serveMuxed is Serve for a Runtime of a Mux: the streaming server, and the Mux routes node's
// calls here until ctx ends.
func (r *Runtime) serveMuxed(ctx context.Context) error {
	streamCtx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	streamServer, streamListener, err := r.newStreamServer(streamCtx)
	if err != nil {
		return err
	}
	m := r.mux
	m.mu.Lock()
	if m.runtimes[r.node] != nil {
		m.mu.Unlock()
		_ = streamListener.Close()
		return fmt.Errorf("fake runtime: node %q already has a runtime on %s", r.node, m.socket)
	}
	m.runtimes[r.node] = r
	m.mu.Unlock()
	served := make(chan error, 1)
	go func() { served <- streamServer.Serve(streamListener) }()
	close(r.ready)

	var result error
	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			result = fmt.Errorf("fake runtime: serve streams of node %q: %w", r.node, err)
		}
	}
	m.mu.Lock()
	delete(m.runtimes, r.node)
	m.mu.Unlock()
	r.shutdown() // ends this node's event streams
	_ = streamServer.Close()
	stopStreams()
	r.sessions.closeAndWait()
	r.wg.Wait()
	return result
}

package fakeruntime

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventBufferSize is how many events a GetContainerEvents stream may fall behind before it is cut
// off (the kubelet's evented PLEG then relists, as it does when containerd drops it).
const eventBufferSize = 256

// eventBus fans container events out to GetContainerEvents streams, one channel each. It is
// guarded by Runtime.mu.
type eventBus map[chan *runtimeapi.ContainerEventResponse]struct{}

// unsubscribe closes ch, which ends its stream; it may be called again.
func (b eventBus) unsubscribe(ch chan *runtimeapi.ContainerEventResponse) {
	if _, ok := b[ch]; ok {
		close(ch)
		delete(b, ch)
	}
}

// publish never blocks: a subscriber whose buffer is full is dropped (its channel closed).
func (b eventBus) publish(ev *runtimeapi.ContainerEventResponse) {
	for ch := range b {
		select {
		case ch <- ev:
		default:
			b.unsubscribe(ch)
		}
	}
}

// publishLocked publishes an event about the container or sandbox id in sandbox s (never nil: a
// sandbox outlives its containers), with the statuses of s and of its containers, as the evented
// PLEG expects; for a sandbox, id is its own ID, as in containerd. removed is the status of a
// container just deleted, which is no longer among them.
func (r *Runtime) publishLocked(id string, s *sandbox, kind runtimeapi.ContainerEventType, removed ...*runtimeapi.ContainerStatus) {
	r.events.publish(&runtimeapi.ContainerEventResponse{
		ContainerId:        id,
		ContainerEventType: kind,
		CreatedAt:          r.clock.Now().UnixNano(),
		PodSandboxStatus:   s.toStatus(),
		ContainersStatuses: append(r.containerStatusesLocked(s.id), removed...),
	})
}

// GetContainerEvents streams container and sandbox lifecycle events until the client goes away
// or the runtime stops.
func (r *Runtime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	r.mu.Lock()
	if r.stopped || r.faults.eventsOff {
		err := r.eventsEndedLocked()
		r.mu.Unlock()
		return err
	}
	events := make(chan *runtimeapi.ContainerEventResponse, eventBufferSize)
	r.events[events] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.events.unsubscribe(events)
		r.mu.Unlock()
	}()
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				r.mu.Lock()
				defer r.mu.Unlock()
				return r.eventsEndedLocked()
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

// eventsEndedLocked is the error that ends (or refuses) a stream: Unimplemented under the
// events-off fault, with the words grpc-go uses for a method the server does not have.
func (r *Runtime) eventsEndedLocked() error {
	switch {
	case r.stopped:
		return status.Error(codes.Unavailable, "the runtime is shutting down")
	case r.faults.eventsOff:
		return status.Error(codes.Unimplemented, "unknown method GetContainerEvents for service runtime.v1.RuntimeService (fault injected: events-off)")
	default:
		return status.Error(codes.Unavailable, "event stream closed: the client fell behind")
	}
}

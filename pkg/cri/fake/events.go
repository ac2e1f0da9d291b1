package fake

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

func (b eventBus) subscribe() chan *runtimeapi.ContainerEventResponse {
	ch := make(chan *runtimeapi.ContainerEventResponse, eventBufferSize)
	b[ch] = struct{}{}
	return ch
}

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

// publishContainerLocked publishes an event about c with its sandbox's status and the statuses of
// all containers in that sandbox, as the evented PLEG expects.
func (r *Runtime) publishContainerLocked(c *container, kind runtimeapi.ContainerEventType) {
	ev := &runtimeapi.ContainerEventResponse{
		ContainerId:        c.id,
		ContainerEventType: kind,
		CreatedAt:          r.clock.Now().UnixNano(),
		ContainersStatuses: r.containerStatusesLocked(c.sandboxID),
	}
	if s := r.sandboxes[c.sandboxID]; s != nil {
		ev.PodSandboxStatus = s.toStatus()
	}
	if kind == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT {
		ev.ContainersStatuses = append(ev.ContainersStatuses, c.toStatus())
	}
	r.events.publish(ev)
}

// publishSandboxLocked publishes an event about a sandbox; ContainerId is the sandbox ID.
func (r *Runtime) publishSandboxLocked(s *sandbox, kind runtimeapi.ContainerEventType) {
	r.events.publish(&runtimeapi.ContainerEventResponse{
		ContainerId:        s.id,
		ContainerEventType: kind,
		CreatedAt:          r.clock.Now().UnixNano(),
		PodSandboxStatus:   s.toStatus(),
		ContainersStatuses: r.containerStatusesLocked(s.id),
	})
}

// GetContainerEvents streams container and sandbox lifecycle events until the client goes away
// or the runtime stops.
func (r *Runtime) GetContainerEvents(_ *runtimeapi.GetEventsRequest, stream grpc.ServerStreamingServer[runtimeapi.ContainerEventResponse]) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return status.Error(codes.Unavailable, "the runtime is shutting down")
	}
	events := r.events.subscribe()
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
				return status.Error(codes.Unavailable, "event stream closed: the runtime is stopping or the client fell behind")
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

// subscriberCount is for tests that must know a stream is listening before they act.
func (r *Runtime) subscriberCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

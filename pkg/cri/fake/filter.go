package fake

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// matchSandbox reports whether a sandbox passes a ListPodSandbox filter. An empty (or nil) filter
// matches everything; an ID matches by prefix, as in containerd.
func matchSandbox(f *runtimeapi.PodSandboxFilter, id string, state runtimeapi.PodSandboxState, labels map[string]string) bool {
	return strings.HasPrefix(id, f.GetId()) && (f.GetState() == nil || f.GetState().GetState() == state) &&
		matchLabels(f.GetLabelSelector(), labels)
}

// matchContainer reports whether a container passes a ListContainers filter.
func matchContainer(f *runtimeapi.ContainerFilter, id, sandboxID string, state runtimeapi.ContainerState, labels map[string]string) bool {
	return strings.HasPrefix(id, f.GetId()) && strings.HasPrefix(sandboxID, f.GetPodSandboxId()) &&
		(f.GetState() == nil || f.GetState().GetState() == state) && matchLabels(f.GetLabelSelector(), labels)
}

// matchLabels is an equality-based label selector: every key of selector must be in labels with
// the same value.
func matchLabels(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// lookupByPrefix finds the object whose ID is id or starts with id. No match is NotFound; a
// prefix shared by several IDs is InvalidArgument.
func lookupByPrefix[T any](objects map[string]T, id, kind string) (T, error) {
	var zero T
	if id == "" {
		return zero, status.Errorf(codes.InvalidArgument, "%s ID is required", kind)
	}
	if obj, ok := objects[id]; ok {
		return obj, nil
	}
	var matches []string
	for candidate := range objects {
		if strings.HasPrefix(candidate, id) {
			matches = append(matches, candidate)
		}
	}
	switch len(matches) {
	case 0:
		return zero, status.Errorf(codes.NotFound, "%s %q not found", kind, id)
	case 1:
		return objects[matches[0]], nil
	default:
		return zero, status.Errorf(codes.InvalidArgument, "%s ID prefix %q is ambiguous: it matches %d IDs, give more characters", kind, id, len(matches))
	}
}

// sortedValues returns the map's values in creation order (by their sequence number), so lists
// are stable even when a fake clock gives many objects the same timestamp.
func sortedValues[T any](m map[string]T, seq func(T) uint64) []T {
	values := slices.Collect(maps.Values(m))
	slices.SortFunc(values, func(a, b T) int { return cmp.Compare(seq(a), seq(b)) })
	return values
}

// containersLocked returns every container in creation order. Callers hold r.mu.
func (r *Runtime) containersLocked() []*container {
	return sortedValues(r.containers, func(c *container) uint64 { return c.seq })
}

// sandboxesLocked returns every sandbox in creation order. Callers hold r.mu.
func (r *Runtime) sandboxesLocked() []*sandbox {
	return sortedValues(r.sandboxes, func(s *sandbox) uint64 { return s.seq })
}

// newID returns a random 64-hex-character ID like containerd's.
func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}

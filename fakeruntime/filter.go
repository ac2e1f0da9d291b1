package fakeruntime

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/labels"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// matches reports whether s passes a ListPodSandbox filter (ListPodSandboxStats has no state:
// nil). An empty filter matches everything; an ID matches by prefix, as in containerd; the label
// selector is equality-based, as the kubelet's.
func (s *sandbox) matches(id string, state *runtimeapi.PodSandboxStateValue, selector map[string]string) bool {
	return strings.HasPrefix(s.id, id) && (state == nil || state.GetState() == s.state) &&
		labels.SelectorFromSet(selector).Matches(labels.Set(s.config.GetLabels()))
}

// matches reports whether c passes a ListContainers filter (ListContainerStats has no state: nil).
func (c *container) matches(id, sandboxID string, state *runtimeapi.ContainerStateValue, selector map[string]string) bool {
	return strings.HasPrefix(c.id, id) && strings.HasPrefix(c.sandboxID, sandboxID) &&
		(state == nil || state.GetState() == c.state) && labels.SelectorFromSet(selector).Matches(labels.Set(c.config.GetLabels()))
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

// sandboxLocked finds a sandbox by ID or unique ID prefix.
func (r *Runtime) sandboxLocked(id string) (*sandbox, error) {
	return lookupByPrefix(r.sandboxes, id, "pod sandbox")
}

// containerLocked finds a container by ID or unique ID prefix.
func (r *Runtime) containerLocked(id string) (*container, error) {
	return lookupByPrefix(r.containers, id, "container")
}

// ordered is a sandbox, container or image: each knows its place in creation order.
type ordered interface{ order() uint64 }

func (s *sandbox) order() uint64   { return s.seq }
func (c *container) order() uint64 { return c.seq }
func (i *image) order() uint64     { return i.seq }

// sorted returns the map's values in creation order, so lists are stable even when a fake clock
// gives many objects the same timestamp.
func sorted[T ordered](m map[string]T) []T {
	return slices.SortedFunc(maps.Values(m), func(a, b T) int { return cmp.Compare(a.order(), b.order()) })
}

// list converts, in creation order, the values of m that keep accepts. All List calls use it.
func list[T ordered, O any](m map[string]T, keep func(T) bool, convert func(T) O) []O {
	var out []O
	for _, v := range sorted(m) {
		if keep(v) {
			out = append(out, convert(v))
		}
	}
	return out
}

// newID returns a random 64-hex-character ID like containerd's.
func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}

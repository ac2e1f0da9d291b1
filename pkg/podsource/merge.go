package podsource

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// merger is upstream's podStorage: per source, the pods it last delivered, keyed by UID. Each
// source hands it a full set; it sends what changed to the updates channel.
type merger struct {
	clock    clock.Clock
	recorder record.EventRecorder
	updates  chan<- PodUpdate

	// mu serialises merges, so the updates of one set are sent before those of the next.
	mu sync.Mutex
	// pods[source][uid] is the pod as last delivered by source (with local annotations stamped).
	pods map[string]map[types.UID]*corev1.Pod
	// seen holds the sources that have delivered at least one full set.
	seen map[string]bool
}

func newMerger(clk clock.Clock, recorder record.EventRecorder, updates chan<- PodUpdate) *merger {
	return &merger{
		clock:    clk,
		recorder: recorder,
		updates:  updates,
		pods:     map[string]map[types.UID]*corev1.Pod{},
		seen:     map[string]bool{},
	}
}

// Merge takes the full current set of pods of source, records it, and sends at most one PodUpdate
// per operation: REMOVE, ADD, UPDATE, DELETE, then RECONCILE (upstream's order). The first set of
// a source with nothing to add still sends an empty ADD, so the kubelet sees the source is ready.
// It blocks while the channel is full, until ctx is done. The caller keeps ownership of pods.
func (m *merger) Merge(ctx context.Context, source string, pods []*corev1.Pod) {
	logger := klog.FromContext(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()

	kept, dropped := dropDuplicateNames(pods)
	for _, pod := range dropped {
		logger.Info("Ignoring a pod with the same name as another from its source", "pod", klog.KObj(pod), "source", source)
		m.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedValidation",
			"Error validating pod %s/%s from %s: duplicate pod name, ignoring", pod.Namespace, pod.Name, source)
	}

	old := m.pods[source]
	incoming := stampLocalAnnotations(kept, old, source, m.clock.Now())
	adds, updates, deletes, removes, reconciles := diffPods(old, incoming)

	next := make(map[types.UID]*corev1.Pod, len(incoming))
	for _, pod := range incoming {
		next[pod.UID] = pod
	}
	m.pods[source] = next
	firstSet := !m.seen[source]
	m.seen[source] = true
	logger.V(4).Info("Merged a set of pods", "source", source, "pods", len(incoming),
		"adds", len(adds), "updates", len(updates), "deletes", len(deletes), "removes", len(removes), "reconciles", len(reconciles))

	m.send(ctx, REMOVE, source, removes)
	m.send(ctx, ADD, source, adds)
	m.send(ctx, UPDATE, source, updates)
	m.send(ctx, DELETE, source, deletes)
	if firstSet && len(adds) == 0 && len(updates) == 0 && len(deletes) == 0 {
		m.sendAlways(ctx, PodUpdate{Op: ADD, Source: source, Pods: []*corev1.Pod{}})
	}
	m.send(ctx, RECONCILE, source, reconciles)
}

// send sends deep copies of pods as one update; nothing if there are none.
func (m *merger) send(ctx context.Context, op Op, source string, pods []*corev1.Pod) {
	if len(pods) == 0 {
		return
	}
	copies := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		copies = append(copies, pod.DeepCopy())
	}
	m.sendAlways(ctx, PodUpdate{Op: op, Source: source, Pods: copies})
}

func (m *merger) sendAlways(ctx context.Context, update PodUpdate) {
	select {
	case m.updates <- update:
	case <-ctx.Done():
	}
}

// seenAll tells whether every one of sources has delivered a full set.
func (m *merger) seenAll(sources []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, source := range sources {
		if !m.seen[source] {
			return false
		}
	}
	return true
}

// stampLocalAnnotations returns copies of pods carrying the kubelet's own annotations: the source,
// and the first-seen time — now for a pod new to this source, kept from old otherwise.
func stampLocalAnnotations(pods []*corev1.Pod, old map[types.UID]*corev1.Pod, source string, now time.Time) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		pod = pod.DeepCopy()
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[ConfigSourceAnnotationKey] = source
		seen := now.UTC().Format(time.RFC3339)
		if prev, ok := old[pod.UID]; ok && prev.Annotations[ConfigFirstSeenAnnotationKey] != "" {
			seen = prev.Annotations[ConfigFirstSeenAnnotationKey]
		}
		pod.Annotations[ConfigFirstSeenAnnotationKey] = seen
		out = append(out, pod)
	}
	return out
}

// diffPods decides, for a source's new full set against the pods it delivered last time, what
// happened to each pod (upstream podStorage.merge + checkAndUpdatePod):
//
//	UID not in old                                        → ADD
//	UID in old, not in new                                → REMOVE
//	spec, labels, annotations (but the kubelet's own),
//	deletionTimestamp or deletionGracePeriodSeconds changed → DELETE if deletionTimestamp is set,
//	                                                         UPDATE otherwise
//	only status changed                                   → RECONCILE
//	nothing changed                                       → nothing
//
// adds, updates, deletes and reconciles hold pods of new, in its order; removes holds pods of old,
// sorted by namespace/name. A UID repeated in new counts once. Neither input is modified.
func diffPods(old map[types.UID]*corev1.Pod, new []*corev1.Pod) (adds, updates, deletes, removes, reconciles []*corev1.Pod) {
	inNew := make(map[types.UID]bool, len(new))
	for _, pod := range new {
		if inNew[pod.UID] {
			continue
		}
		inNew[pod.UID] = true
		existing, ok := old[pod.UID]
		switch {
		case !ok:
			adds = append(adds, pod)
		case podsDifferSemantically(existing, pod) && pod.DeletionTimestamp != nil:
			deletes = append(deletes, pod)
		case podsDifferSemantically(existing, pod):
			updates = append(updates, pod)
		case !apiequality.Semantic.DeepEqual(existing.Status, pod.Status):
			reconciles = append(reconciles, pod)
		}
	}
	for uid, pod := range old {
		if !inNew[uid] {
			removes = append(removes, pod)
		}
	}
	slices.SortFunc(removes, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return adds, updates, deletes, removes, reconciles
}

// podsDifferSemantically tells whether the kubelet must act on a change between two versions of
// a pod: anything in spec, labels, non-local annotations or deletion fields. Status, resource
// version and the like do not count.
func podsDifferSemantically(existing, pod *corev1.Pod) bool {
	return !apiequality.Semantic.DeepEqual(existing.Spec, pod.Spec) ||
		!apiequality.Semantic.DeepEqual(existing.Labels, pod.Labels) ||
		!apiequality.Semantic.DeepEqual(existing.DeletionTimestamp, pod.DeletionTimestamp) ||
		!apiequality.Semantic.DeepEqual(existing.DeletionGracePeriodSeconds, pod.DeletionGracePeriodSeconds) ||
		!apiequality.Semantic.DeepEqual(withoutLocalAnnotations(existing.Annotations), withoutLocalAnnotations(pod.Annotations))
}

// withoutLocalAnnotations drops the annotations the kubelet writes itself (source, mirror,
// first-seen), so they never make a pod look changed.
func withoutLocalAnnotations(annotations map[string]string) map[string]string {
	out := make(map[string]string, len(annotations))
	for k, v := range annotations {
		switch k {
		case ConfigSourceAnnotationKey, ConfigMirrorAnnotationKey, ConfigFirstSeenAnnotationKey:
		default:
			out[k] = v
		}
	}
	return out
}

// dropDuplicateNames keeps the first pod of each namespace/name and drops the others: one source
// must not deliver two pods with the same full name (upstream filterInvalidPods).
func dropDuplicateNames(pods []*corev1.Pod) (kept, dropped []*corev1.Pod) {
	names := make(map[types.NamespacedName]bool, len(pods))
	for _, pod := range pods {
		name := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
		if names[name] {
			dropped = append(dropped, pod)
			continue
		}
		names[name] = true
		kept = append(kept, pod)
	}
	return kept, dropped
}

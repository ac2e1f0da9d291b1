package statusmanager

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

const (
	// Upstream kubecontainer.ContainerReasonStatusUnknown and the message its TerminatePod writes.
	reasonStatusUnknown  = "ContainerStatusUnknown"
	messageStatusUnknown = "The container could not be located when the pod was terminated"
	// exitCodeUnknown is 128+SIGKILL: what upstream reports for a container it cannot find.
	exitCodeUnknown = 137
)

// prepareStatus turns a status the kubelet computed into the one to cache, given the status it
// replaces (the cached one, or the pod's API status the first time) and the time now:
// lastTransitionTime stays when a condition's status did not change, startTime never moves once
// set, observedGeneration never goes back, and every time is truncated to seconds as the API
// server stores it, so that comparing the cache with the API status is stable. Upstream:
// updateStatusInternal and normalizeStatus.
func prepareStatus(old *corev1.PodStatus, status corev1.PodStatus, now time.Time) corev1.PodStatus {
	status = *status.DeepCopy()
	updateTransitionTimes(old, &status, metav1.NewTime(now))
	status.ObservedGeneration = max(status.ObservedGeneration, old.ObservedGeneration)
	switch {
	case old.StartTime != nil && !old.StartTime.IsZero():
		status.StartTime = old.StartTime.DeepCopy()
	case status.StartTime == nil || status.StartTime.IsZero():
		status.StartTime = &metav1.Time{Time: now}
	}
	normalizeTimes(&status)
	return status
}

// updateTransitionTimes sets each condition's lastTransitionTime in status: the old one when the
// condition's status is unchanged, now when it is new or its status changed (upstream
// updateLastTransitionTime).
func updateTransitionTimes(old, status *corev1.PodStatus, now metav1.Time) {
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if prev := findCondition(old.Conditions, c.Type); prev != nil && prev.Status == c.Status {
			c.LastTransitionTime = prev.LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
	}
}

// normalizeTimes truncates every timestamp of status to whole seconds (RFC 3339), as the API
// server does when it stores a status.
func normalizeTimes(status *corev1.PodStatus) {
	truncate := func(t *metav1.Time) { *t = t.Rfc3339Copy() }
	if status.StartTime != nil {
		truncate(status.StartTime)
	}
	for i := range status.Conditions {
		truncate(&status.Conditions[i].LastProbeTime)
		truncate(&status.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]corev1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses, status.EphemeralContainerStatuses} {
		for i := range list {
			for _, state := range []*corev1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if state.Running != nil {
					truncate(&state.Running.StartedAt)
				}
				if state.Terminated != nil {
					truncate(&state.Terminated.StartedAt)
					truncate(&state.Terminated.FinishedAt)
				}
			}
		}
	}
}

// statusChanged reports whether new differs from old in anything but the conditions'
// lastProbeTime (which moves on every probe and is not worth a write). Nil and empty lists are
// equal, as after a JSON round trip through the API server.
func statusChanged(old, new corev1.PodStatus) bool {
	withoutProbeTimes := func(s corev1.PodStatus) *corev1.PodStatus {
		c := s.DeepCopy()
		for i := range c.Conditions {
			c.Conditions[i].LastProbeTime = metav1.Time{}
		}
		return c
	}
	return !apiequality.Semantic.DeepEqual(withoutProbeTimes(old), withoutProbeTimes(new))
}

// mergeStatus returns the status to write over the API status api: the kubelet's cached status,
// except for what others own. The conditions are the API's of every type the kubelet does not
// own (PodConditionByKubelet: readiness gates, DisruptionTarget), in the API's order, then the
// cached ones of the types it owns; a condition of another type in the cache (copied from an
// older API status) is dropped, so the kubelet never writes back a readiness gate someone else
// has changed since. DisruptionTarget is shared: the cache's (an eviction's) replaces the API's,
// but only with the move to a terminal phase once no container runs, as upstream. The
// scheduler's nominatedNodeName and the resource claim statuses come from the API. Upstream:
// mergePodStatus (simplified).
func mergeStatus(api, cached corev1.PodStatus) corev1.PodStatus {
	merged := *cached.DeepCopy()
	conditions := make([]corev1.PodCondition, 0, len(api.Conditions)+len(cached.Conditions))
	for _, c := range api.Conditions {
		if !PodConditionByKubelet(c.Type) {
			conditions = append(conditions, *c.DeepCopy())
		}
	}
	for _, c := range merged.Conditions {
		if PodConditionByKubelet(c.Type) {
			conditions = append(conditions, c)
		}
	}
	if target := findCondition(merged.Conditions, corev1.DisruptionTarget); target != nil &&
		!isTerminalPhase(api.Phase) && isTerminalPhase(cached.Phase) && allContainersStopped(nil, cached) {
		conditions = setCondition(conditions, *target)
	}
	merged.Conditions = conditions
	merged.NominatedNodeName = api.NominatedNodeName
	merged.ResourceClaimStatuses = api.ResourceClaimStatuses
	merged.ExtendedResourceClaimStatus = api.ExtendedResourceClaimStatus
	merged.NodeAllocatableResourceClaimStatuses = api.NodeAllocatableResourceClaimStatuses
	return merged
}

// statusPatch is the strategic merge patch that turns a pod with status old into one with status
// new. The pod's UID is put only in the new object, so it appears in the patch and the API server
// rejects the patch if the pod was recreated under the same name (upstream
// statusutil.PatchPodStatus).
func statusPatch(uid types.UID, old, new corev1.PodStatus) ([]byte, error) {
	oldJSON, err := json.Marshal(corev1.Pod{Status: old})
	if err != nil {
		return nil, fmt.Errorf("encode the API status: %w", err)
	}
	newJSON, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: new})
	if err != nil {
		return nil, fmt.Errorf("encode the new status: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("compute the status patch: %w", err)
	}
	return patch, nil
}

// setCondition replaces the condition of c's type in conditions, or appends c.
func setCondition(conditions []corev1.PodCondition, c corev1.PodCondition) []corev1.PodCondition {
	if prev := findCondition(conditions, c.Type); prev != nil {
		*prev = c
		return conditions
	}
	return append(conditions, c)
}

// findCondition returns a pointer into conditions to the condition of type t, or nil.
func findCondition(conditions []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// allContainersStopped is the default PodDeletionSafety: no container status is running, and
// each one is either terminated or waiting (never started). A pod without container statuses is
// safe: nothing of it runs.
func allContainersStopped(_ *corev1.Pod, status corev1.PodStatus) bool {
	for _, list := range [][]corev1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses, status.EphemeralContainerStatuses} {
		for _, c := range list {
			if c.State.Running != nil || (c.State.Terminated == nil && c.State.Waiting == nil) {
				return false
			}
		}
	}
	return true
}

// entry is one cached pod status with its bookkeeping.
type entry struct {
	// pod is a copy of the pod the status belongs to (its status cleared): its name and
	// namespace to GET, its annotations to tell a static pod.
	pod     *corev1.Pod
	status  corev1.PodStatus
	version uint64
	// written is the highest version written to (or found already in) the API object writtenTo.
	written   uint64
	writtenTo types.UID
	// deleting is set once the pod was seen with a deletionTimestamp: the resync keeps checking
	// whether it can be deleted.
	deleting bool
	// forbiddenSince is when the API server started to answer 403 for the pod (zero: it did not
	// in the last sync); see judgeForbidden.
	forbiddenSince time.Time
}

// authorizerLag is how long the API server may refuse a pod the kubelet knows before that is an
// error. The node authorizer lets a node read and write only the pods bound to it, as its graph
// of API objects shows, and the graph follows the API a moment after the kubelet's watch can:
// a pod bound by spec.nodeName may reach the kubelet before the graph links it to the node, and
// a deleted pod leaves the graph before the kubelet's watch says it is gone. Both last well under
// a second on an idle control plane; 15 s covers a loaded one (two resyncs).
const authorizerLag = 15 * time.Second

// forbiddenVerdict is what a 403 for a pod's GET or PATCH means (judgeForbidden).
type forbiddenVerdict int

const (
	// podGone: the kubelet no longer knows the pod (its deletion reached the watch): drop its status.
	podGone forbiddenVerdict = iota
	// notLinkedYet: the API server has not caught up with the pod's binding or deletion yet: try
	// again on the next resync, no error.
	notLinkedYet
	// stillForbidden: refused for authorizerLag: a real error (RBAC, the node authorizer off).
	stillForbidden
)

// judgeForbidden decides what a 403 for a pod means: known says whether the kubelet still has the
// pod, since is when the 403s began. Upstream's syncPod logs every failed GET as an error ("Failed
// to get status for pod") and leaves a deleted pod's status to RemoveOrphanedStatuses; ours is
// quiet about the authorizer's lag, which is no failure, and reports a 403 that lasts.
func judgeForbidden(known bool, since, now time.Time) forbiddenVerdict {
	switch {
	case !known:
		return podGone
	case now.Sub(since) < authorizerLag:
		return notLinkedYet
	}
	return stillForbidden
}

// needsSync decides whether a cached entry has anything to send to the API object targetUID: a
// version newer than the one written, a different API object than the one last written (a
// recreated mirror pod), or a deletion to finish.
func needsSync(e entry, targetUID types.UID) bool {
	return e.version > e.written || e.writtenTo != targetUID || e.deleting
}

func isTerminalPhase(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

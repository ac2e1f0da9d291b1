package nodestatus

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusInputs is everything computeStatus needs, gathered by the loop (I/O) beforehand.
type statusInputs struct {
	machine        Machine             // its Capacity is the node's, overrides and pods included
	allocatable    corev1.ResourceList // capacity less the reservations (NodeResources)
	addresses      []corev1.NodeAddress
	kubeletVersion string
	runtimeVersion string // "" until a runtime reports one
	kubeletPort    int32
	notReady       []string // failed readiness checks, "name: error"
	// pressure are the pressure conditions the eviction manager reports True (MemoryPressure, …).
	pressure map[corev1.NodeConditionType]bool
	now      time.Time
}

// The pressure conditions a node reports, with the reasons and messages upstream's setters use
// when the eviction manager reports the pressure (True) and when not (False).
var pressureConditions = []struct {
	typ                       corev1.NodeConditionType
	trueReason, trueMessage   string
	falseReason, falseMessage string
}{
	{corev1.NodeMemoryPressure, "KubeletHasInsufficientMemory", "kubelet has insufficient memory available",
		"KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
	{corev1.NodeDiskPressure, "KubeletHasDiskPressure", "kubelet has disk pressure",
		"KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
	{corev1.NodePIDPressure, "KubeletHasInsufficientPID", "kubelet has insufficient PID available",
		"KubeletHasSufficientPID", "kubelet has sufficient PID available"},
}

// computeStatus returns the status the node should have now, given the status it has (old). It is
// a pure function: conditions keep their lastTransitionTime unless their status changes, and every
// condition's lastHeartbeatTime is now (upstream setters.go).
func computeStatus(old corev1.NodeStatus, in statusInputs) corev1.NodeStatus {
	st := corev1.NodeStatus{
		Capacity:        in.machine.Capacity.DeepCopy(),
		Allocatable:     in.allocatable.DeepCopy(),
		Addresses:       in.addresses,
		NodeInfo:        in.machine.Info,
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: in.kubeletPort}},
		Images:          old.Images,
		VolumesInUse:    old.VolumesInUse,
		VolumesAttached: old.VolumesAttached,
	}
	st.NodeInfo.KubeletVersion = in.kubeletVersion
	st.NodeInfo.ContainerRuntimeVersion = in.runtimeVersion

	now := metav1.NewTime(in.now)
	for _, p := range pressureConditions {
		if in.pressure[p.typ] {
			st.Conditions = append(st.Conditions, condition(old, p.typ, corev1.ConditionTrue, p.trueReason, p.trueMessage, now))
		} else {
			st.Conditions = append(st.Conditions, condition(old, p.typ, corev1.ConditionFalse, p.falseReason, p.falseMessage, now))
		}
	}
	if len(in.notReady) == 0 {
		st.Conditions = append(st.Conditions, condition(old, corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status", now))
	} else {
		st.Conditions = append(st.Conditions, condition(old, corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", strings.Join(in.notReady, "; "), now))
	}
	return st
}

func condition(old corev1.NodeStatus, typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string, now metav1.Time) corev1.NodeCondition {
	c := corev1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now}
	if prev := findCondition(old, typ); prev != nil && prev.Status == status {
		c.LastTransitionTime = prev.LastTransitionTime
	}
	return c
}

func findCondition(st corev1.NodeStatus, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// needsReport decides whether to PATCH the computed status: when anything but heartbeat times
// changed, or when reportFrequency has passed since the last report (upstream
// kubelet_node_status.go: nodeStatusHasChanged and nodeStatusReportFrequency). With the Lease as
// the heartbeat, an unchanged node costs one PATCH per 5 minutes, not one per 10 seconds.
func needsReport(old, computed corev1.NodeStatus, lastReport, now time.Time, reportFrequency time.Duration) bool {
	if now.Sub(lastReport) >= reportFrequency {
		return true
	}
	return statusChanged(old, computed)
}

// statusChanged compares two statuses ignoring the conditions' lastHeartbeatTime.
func statusChanged(old, computed corev1.NodeStatus) bool {
	a, b := old.DeepCopy(), computed.DeepCopy()
	for _, st := range []*corev1.NodeStatus{a, b} {
		for i := range st.Conditions {
			st.Conditions[i].LastHeartbeatTime = metav1.Time{}
		}
	}
	return !apiequality.Semantic.DeepEqual(a, b)
}

// conditionEvents returns the events a status change deserves, as upstream's setters record them:
// for each pressure condition that changed (or is first set), its reason with Node for Kubelet
// (NodeHasInsufficientMemory, NodeHasSufficientMemory, NodeHasDiskPressure, …), and
// NodeReady/NodeNotReady when Ready flips (or is first set).
func conditionEvents(old, computed corev1.NodeStatus) []string {
	var reasons []string
	for _, p := range pressureConditions {
		prev, cur := findCondition(old, p.typ), findCondition(computed, p.typ)
		if cur != nil && (prev == nil || prev.Status != cur.Status) {
			reasons = append(reasons, "Node"+strings.TrimPrefix(cur.Reason, "Kubelet"))
		}
	}
	prev, cur := findCondition(old, corev1.NodeReady), findCondition(computed, corev1.NodeReady)
	if cur != nil && (prev == nil || prev.Status != cur.Status) {
		if cur.Status == corev1.ConditionTrue {
			reasons = append(reasons, "NodeReady")
		} else {
			reasons = append(reasons, "NodeNotReady")
		}
	}
	return reasons
}

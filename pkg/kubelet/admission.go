package kubelet

// Pod admission: will this node run a pod it was given? Checked once, when the pod is added
// (upstream: pkg/kubelet/lifecycle/predicate.go predicateAdmitHandler.Admit; kubelet.go
// canAdmitPod and rejectPod).

import (
	"fmt"
	"runtime"

	corev1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/pkg/podworkers"
)

// Reasons of a rejected pod's Failed status and of its Warning Event (upstream lifecycle
// package).
const (
	reasonPodOSSelectorNodeLabelDoesNotMatch = "PodOSSelectorNodeLabelDoesNotMatch"
	reasonPodOSNotSupported                  = "PodOSNotSupported"
	reasonOutOfPods                          = "OutOfpods"
)

// admission is the answer of one admission check: admit, or reject with a reason and a message.
type admission struct {
	admit           bool
	reason, message string
}

var admitted = admission{admit: true}

// admitOS is the first two checks of upstream's predicate admit handler, those no preemption can
// help, in its order and wording. nodeOS is the OS the kubelet runs on (runtime.GOOS), which is
// also the node's kubernetes.io/os label (upstream takes the label as runtime.GOOS whatever the
// Node says).
//
//  1. The pod's own kubernetes.io/os label — upstream reads pod.labels here, not
//     spec.nodeSelector (that one is the scheduler's) — names another OS:
//     PodOSSelectorNodeLabelDoesNotMatch.
//  2. spec.os.name names another OS: PodOSNotSupported.
//
// Pure.
func admitOS(pod *corev1.Pod, nodeOS string) admission {
	if os, ok := pod.Labels[corev1.LabelOSStable]; ok && os != nodeOS {
		return admission{reason: reasonPodOSSelectorNodeLabelDoesNotMatch,
			message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != nodeOS {
		return admission{reason: reasonPodOSNotSupported, message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	return admitted
}

// admitPodCount is the pods resource of upstream's general predicates: with maxPods set, a new
// pod fits only while fewer than maxPods others are active (admitted and not terminal). Pure.
func admitPodCount(active, maxPods int) admission {
	if maxPods <= 0 || active < maxPods {
		return admitted
	}
	return admission{reason: reasonOutOfPods,
		message: fmt.Sprintf("Node didn't have enough resource: pods, requested: 1, used: %d, capacity: %d", active, maxPods)}
}

// admit is the kubelet's admission of pod. Upstream runs its admit handlers in this order and
// stops at the first rejection: eviction, sysctls, resource allocation, then the predicate
// handler (the OS checks first, then the general predicates, the pod count among them),
// AppArmor, pod features, shutdown. minikubelet has the sysctls (sysctl.go), the OS checks and
// the pod count.
func (p *pods) admit(pod *corev1.Pod) admission {
	if err := checkSysctls(pod); err != nil {
		return admission{reason: reasonSysctlForbidden, message: err.Error()}
	}
	if a := admitOS(pod, runtime.GOOS); !a.admit {
		return a
	}
	if p.cfg.MaxPods <= 0 {
		return admitted
	}
	active := 0
	for _, other := range p.manager.GetPods() {
		if other.UID == pod.UID || isTerminal(other) {
			continue
		}
		if st, ok := p.workers.State(other.UID); ok && st == podworkers.Syncing {
			active++
		}
	}
	return admitPodCount(active, p.cfg.MaxPods)
}

// reject marks a pod the node will not run as Failed with a fresh status, and says why in a
// Warning Event, as upstream's rejectPod.
func (p *pods) reject(pod *corev1.Pod, a admission) {
	p.recorder.Eventf(pod, corev1.EventTypeWarning, a.reason, "%s", a.message)
	p.status.SetPodStatus(pod, corev1.PodStatus{
		QOSClass: pod.Status.QOSClass, // as the API server set it
		Phase:    corev1.PodFailed,
		Reason:   a.reason,
		Message:  "Pod was rejected: " + a.message,
	})
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
